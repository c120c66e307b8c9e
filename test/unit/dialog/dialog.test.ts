import { describe, expect, it } from 'vitest';
import { Dialog } from '../../../src/dialog/dialog.js';
import { isLlamaDialogError, type ErrorName } from '../../../src/errors.js';

function expectError(name: ErrorName, action: () => unknown): Error {
  try {
    action();
  } catch (error) {
    expect(isLlamaDialogError(error, name), String(error)).toBe(true);
    return error as Error;
  }
  throw new Error(`expected ${name}`);
}

function sampleDialog(): Dialog {
  let now = 100;
  const dialog = new Dialog({ clock: () => now++ });
  dialog.beginTurn('Hello', { slots: { place: 'forge' } });
  dialog.addKnowledge({ text: 'The smith is called Brom', source: 'lore', score: 0.9 });
  dialog.addInstruction({ name: 'tone', text: 'gruff' });
  const call = dialog.addToolCall({ node: 'tools', name: 'price', arguments: '{"item":"blade"}', disposition: 'Replay' });
  dialog.completeToolCall(call.id, '12 gold');
  dialog.addReply({ node: 'answer', text: 'Twelve gold', tokens: Int32Array.of(5, 6, 7), model: 'm' });
  dialog.endTurn();
  dialog.beginTurn('Deal');
  dialog.addReply({ node: 'think', text: 'hidden', historyRole: 'None' });
  dialog.addSummary({ node: 'summarize', text: 'They met.', coversThroughTurn: 0 });
  return dialog;
}

describe('Dialog', () => {
  it('records turns with everything attached, numbered in order', () => {
    const dialog = sampleDialog();
    expect(dialog.length).toBe(2);
    const [first, second] = dialog.interactions;
    expect(first).toMatchObject({
      turn: 0,
      userLine: 'Hello',
      slots: { place: 'forge' },
      knowledge: [{ text: 'The smith is called Brom', source: 'lore', score: 0.9, node: null }],
      instructions: [{ name: 'tone', text: 'gruff', node: null }],
      toolCalls: [{ id: 'call_1', name: 'price', result: '12 gold', status: 'Completed', disposition: 'Replay' }],
      replies: [{ node: 'answer', text: 'Twelve gold', tokens: [5, 6, 7], historyRole: 'Assistant', model: 'm' }],
    });
    expect(first!.completedAt).not.toBeNull();
    expect(second!.replies[0]!.historyRole).toBe('None');
    expect(dialog.latestSummary()).toMatchObject({ text: 'They met.', coversThroughTurn: 0, writtenInTurn: 1 });
  });

  it('round-trips through a versioned JSON snapshot with the agent variables', () => {
    const dialog = sampleDialog();
    const snapshot = dialog.toSnapshot({ gold: 12, name: 'Brom' });
    expect(snapshot).toMatchObject({ kind: 'llama-dialog/dialog', version: 1 });
    const json = JSON.stringify(snapshot);
    const { dialog: restored, variables } = Dialog.fromSnapshot(json);
    expect(variables).toEqual({ gold: 12, name: 'Brom' });
    expect(restored.interactions).toEqual(dialog.interactions);
    // The restored dialog keeps working: new tool-call ids do not collide.
    restored.beginTurn('More?');
    expect(restored.addToolCall({ node: 'tools', name: 'x' }).id).not.toBe('call_1');
  });

  it('rejects malformed snapshots with InvalidSnapshot and leaves the dialog unchanged', () => {
    const dialog = sampleDialog();
    const before = JSON.stringify(dialog.toSnapshot());
    const revision = dialog.revision;
    const good = dialog.toSnapshot();
    const bad: unknown[] = [
      'not json {',
      null,
      { ...good, version: 2 },
      { ...good, kind: 'something-else' },
      { ...good, interactions: [{ userLine: 42 }] },
      { ...good, interactions: [{ userLine: 'a', replies: [{ node: 'n', text: 't', tokens: [-1] }] }] },
      { ...good, interactions: [{ userLine: 'a', turn: 3 }] },
      { ...good, interactions: [{ userLine: 'a', summaries: [{ node: 's', text: 't', coversThroughTurn: 5 }] }] },
      { ...good, interactions: [{ userLine: 'a', toolCalls: [{ id: 'x', node: 'n', name: 't' }, { id: 'x', node: 'n', name: 't' }] }] },
      { ...good, extra: true },
    ];
    for (const snapshot of bad) {
      const error = expectError('InvalidSnapshot', () => dialog.restoreSnapshot(snapshot));
      expect(error.message.length).toBeGreaterThan(20);
    }
    expect(JSON.stringify(dialog.toSnapshot())).toBe(before);
    expect(dialog.revision).toBe(revision);
  });

  it('rejects a user line over the configured maximum with InputTooLong, dialog unchanged', () => {
    const dialog = new Dialog({ limits: { maxUserLineChars: 10 } });
    dialog.beginTurn('short');
    const revision = dialog.revision;
    const error = expectError('InputTooLong', () => dialog.beginTurn('x'.repeat(11)));
    expect(error.message).toMatch(/11 characters, over the limit of 10/);
    expect(dialog.length).toBe(1);
    expect(dialog.revision).toBe(revision);
    expectError('InputTooLong', () => dialog.editUserLine(0, 'y'.repeat(11)));
    expect(dialog.interactions[0]!.userLine).toBe('short');
    expectError('InputTooLong', () => dialog.seed([{ userLine: 'z'.repeat(11) }]));
    expect(dialog.interactions[0]!.userLine).toBe('short');
    const snapshot = { kind: 'llama-dialog/dialog', version: 1, interactions: [{ userLine: 'w'.repeat(11) }] };
    expectError('InputTooLong', () => dialog.restoreSnapshot(snapshot));
    expect(dialog.length).toBe(1);
  });

  it('limits tool results and items per turn', () => {
    const dialog = new Dialog({ limits: { maxItemChars: 5, maxItemsPerTurn: 2 } });
    dialog.beginTurn('hi');
    const call = dialog.addToolCall({ node: 't', name: 'x' });
    expectError('InputTooLong', () => dialog.completeToolCall(call.id, 'toolong'));
    expect(dialog.interactions[0]!.toolCalls[0]!.result).toBeNull();
    dialog.addReply({ node: 'a', text: 'ok' });
    expectError('InputTooLong', () => dialog.addReply({ node: 'a', text: 'ok' }));
    expect(dialog.interactions[0]!.replies.length).toBe(1);
  });

  it('seeds, edits and truncates history, bumping the epoch', () => {
    const dialog = sampleDialog();
    const epoch = dialog.epoch;
    dialog.beginTurn('appending does not change the epoch');
    expect(dialog.epoch).toBe(epoch);
    dialog.editReplyText(0, 0, 'Ten gold');
    expect(dialog.interactions[0]!.replies[0]).toMatchObject({ text: 'Ten gold', tokens: [] });
    expect(dialog.epoch).toBe(epoch + 1);
    dialog.truncate(1);
    expect(dialog.length).toBe(1);
    dialog.seed([{ userLine: 'Seeded line', replies: [{ node: 'answer', text: 'Seeded reply' }] }, { userLine: 'Second' }]);
    expect(dialog.interactions.map((turn) => turn.userLine)).toEqual(['Seeded line', 'Second']);
    expect(dialog.interactions[0]!.replies[0]).toMatchObject({ historyRole: 'Assistant', tokens: [], model: null });
    expect(dialog.epoch).toBe(epoch + 3);
    expectError('InvalidSnapshot', () => dialog.seed([{ replies: [] }]));
    expect(dialog.length).toBe(2);
  });

  it('refuses mutations without a turn, unknown ids, and summaries that go backwards', () => {
    const dialog = new Dialog();
    expectError('InvalidArgument', () => dialog.addReply({ node: 'a', text: 'x' }));
    dialog.beginTurn('a');
    dialog.beginTurn('b');
    expectError('InvalidArgument', () => dialog.completeToolCall('nope', 'x'));
    dialog.addSummary({ node: 's', text: 't', coversThroughTurn: 1 });
    expectError('InvalidArgument', () => dialog.addSummary({ node: 's', text: 't', coversThroughTurn: 0 }));
    expectError('InvalidArgument', () => dialog.addSummary({ node: 's', text: 't', coversThroughTurn: 2 }));
    expectError('InvalidToken', () => dialog.addReply({ node: 'a', text: 'x', tokens: [1.5] }));
    expectError('InvalidArgument', () => new Dialog({ limits: { maxUserLineChars: 0 } }));
  });
});
