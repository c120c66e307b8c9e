import { describe, expect, it } from 'vitest';
import { Dialog } from '../../../src/dialog/dialog.js';
import { isLlamaDialogError } from '../../../src/errors.js';
import { buildSummaryMessages, planRollingSummary, turnTranscript } from '../../../src/prompt/rolling-summary.js';
import { SUMMARY_LABEL_START } from '../../../src/prompt/summary-label.js';
import { makeProjector } from './helpers.js';

/** Each turn's transcript is "User: line N\nAssistant: reply N": count words as tokens. */
const countWords = (text: string): number => text.split(/\s+/).filter(Boolean).length;

function dialogOf(turns: number): Dialog {
  const dialog = new Dialog();
  for (let turn = 0; turn < turns; turn++) {
    dialog.beginTurn(`line ${turn}`);
    dialog.addReply({ node: 'answer', text: `reply ${turn}` });
    dialog.addReply({ node: 'think', text: 'secret reasoning', historyRole: 'None' });
  }
  return dialog;
}

describe('rolling summary scheduling', () => {
  it('triggers when the unsummarized turns outside the kept ones reach Trigger Tokens', () => {
    // 6 words per turn. keepRecentTurns 2: with 6 turns, turns 0..3 are candidates = 24 words.
    expect(planRollingSummary(dialogOf(6), { triggerTokens: 25, keepRecentTurns: 2 }, countWords)).toBeNull();
    const plan = planRollingSummary(dialogOf(6), { triggerTokens: 24, keepRecentTurns: 2 }, countWords);
    expect(plan).toMatchObject({ fromTurn: 0, throughTurn: 3, previousSummary: null, pendingTokens: 24 });
    expect(plan!.turns.map((turn) => turn.turn)).toEqual([0, 1, 2, 3]);
    expect(plan!.transcript).toBe('User: line 0\nAssistant: reply 0\nUser: line 1\nAssistant: reply 1\nUser: line 2\nAssistant: reply 2\nUser: line 3\nAssistant: reply 3');
    expect(plan!.transcript).not.toContain('secret');
  });

  it('never summarizes the latest Keep Recent Turns, and continues from the previous summary', () => {
    const dialog = dialogOf(10);
    dialog.addSummary({ node: 'summarize', text: 'Turns 0-3 happened.', coversThroughTurn: 3 });
    const plan = planRollingSummary(dialog, { triggerTokens: 1, keepRecentTurns: 4 }, countWords);
    expect(plan).toMatchObject({ fromTurn: 4, throughTurn: 5, previousSummary: 'Turns 0-3 happened.' });
    expect(planRollingSummary(dialog, { triggerTokens: 1, keepRecentTurns: 6 }, countWords)).toBeNull();
    const messages = buildSummaryMessages(plan!, 'Summarize as the smith remembers it.');
    expect(messages[0]).toEqual({ role: 'system', content: 'Summarize as the smith remembers it.' });
    expect(messages[1]!.content).toContain('Previous summary:\nTurns 0-3 happened.');
    expect(messages[1]!.content).toContain('User: line 5');
    expect(messages[1]!.content).not.toContain('line 6');
  });

  it('ends the request with what to write, after the transcript, so the last dialogue line reads as data', () => {
    const dialog = dialogOf(6);
    const first = planRollingSummary(dialog, { triggerTokens: 1, keepRecentTurns: 2 }, countWords)!;
    const opening = buildSummaryMessages(first)[1]!.content;
    // The transcript is closed by a marker and followed by the request, never the other way round.
    expect(opening.indexOf('User: line 3')).toBeLessThan(opening.indexOf('[End of dialogue]'));
    expect(opening.trimEnd().endsWith('Answer with the summary only.')).toBe(true);
    expect(opening).not.toContain('previous summary');
    dialog.addSummary({ node: 'summarize', text: 'Brom sold a blade.', coversThroughTurn: first.throughTurn });
    dialog.beginTurn('line 6');
    dialog.beginTurn('line 7');
    const extending = planRollingSummary(dialog, { triggerTokens: 1, keepRecentTurns: 2 }, countWords)!;
    const update = buildSummaryMessages(extending)[1]!.content;
    expect(update.startsWith('Previous summary:\nBrom sold a blade.')).toBe(true);
    expect(update.slice(update.indexOf('[End of dialogue]'))).toContain('keeping every fact of the previous summary');
  });

  it('a written summary is labelled as data in the system message and history starts after the covered turns', () => {
    const dialog = dialogOf(8);
    const plan = planRollingSummary(dialog, { triggerTokens: 10, keepRecentTurns: 3 }, countWords)!;
    dialog.addSummary({ node: 'summarize', text: 'Brom sold a blade.', coversThroughTurn: plan.throughTurn });
    dialog.beginTurn('What did I buy?');
    const { projector } = makeProjector();
    const { messages, diagnostics } = projector.project(dialog);
    expect(messages[0]!.content).toContain(`${SUMMARY_LABEL_START}\nBrom sold a blade.`);
    expect(diagnostics.firstTurnInPrompt).toBe(plan.throughTurn + 1);
    // The kept recent turns are replayed word for word.
    expect(messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual(['line 5', 'line 6', 'line 7', 'What did I buy?']);
  });

  it('rejects bad schedule values', () => {
    for (const schedule of [{ triggerTokens: 0, keepRecentTurns: 1 }, { triggerTokens: 10, keepRecentTurns: -1 }]) {
      let thrown: unknown;
      try {
        planRollingSummary(dialogOf(2), schedule, countWords);
      } catch (error) {
        thrown = error;
      }
      expect(isLlamaDialogError(thrown, 'InvalidParamValue')).toBe(true);
    }
  });

  it('transcripts include replayed tool pairs only', () => {
    const dialog = new Dialog();
    dialog.beginTurn('price?');
    const shown = dialog.addToolCall({ node: 't', name: 'price', arguments: '{}', disposition: 'Replay' });
    dialog.completeToolCall(shown.id, '12');
    const hidden = dialog.addToolCall({ node: 't', name: 'secret', disposition: 'Omit' });
    dialog.completeToolCall(hidden.id, 'x');
    expect(turnTranscript(dialog.interactions[0]!)).toBe('User: price?\n[tool price({}) returned: 12]');
  });
});
