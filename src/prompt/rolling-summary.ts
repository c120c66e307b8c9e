import type { Dialog } from '../dialog/dialog.js';
import { isToolCallReplayed, type Interaction } from '../dialog/interaction.js';
import { LlamaDialogError } from '../errors.js';
import type { ChatMessage } from './chat-message.js';

/** Summarize node parameters that drive scheduling (SPEC §3.5). */
export interface RollingSummarySchedule {
  /** Summarize once the not-yet-summarized turns, excluding the kept ones, reach this many tokens (≥ 1). */
  triggerTokens: number;
  /** The latest this-many turns (the current one included) are never summarized (≥ 0). */
  keepRecentTurns: number;
}

export interface TranscriptLabels {
  /** Default `User`. */
  user?: string;
  /** Default `Assistant`. */
  assistant?: string;
}

/** What a Summarize node should fold into a new summary this turn. */
export interface SummaryPlan {
  /** First turn folded in (the one after the previous summary's coverage). */
  fromTurn: number;
  /** Last turn (inclusive) the new summary covers: pass it to `dialog.addSummary({ coversThroughTurn })`. */
  throughTurn: number;
  /** Text of the summary being extended, or null for the first one. */
  previousSummary: string | null;
  /** The turns folded in, oldest first. */
  turns: readonly Readonly<Interaction>[];
  /** Their transcript (user lines, visible replies, replayed tool pairs), one line each. */
  transcript: string;
  /** Tokens of the transcript, the figure compared with `triggerTokens`. */
  pendingTokens: number;
}

/**
 * Decides whether a rolling summary is due: when the turns after the newest summary's coverage, excluding the
 * latest `keepRecentTurns`, hold at least `triggerTokens` tokens (of their transcript), returns the plan; else null.
 * @param countTokens exact counter, e.g. `(text) => assembler.countContentTokens(text)`.
 * @throws LlamaDialogError `InvalidParamValue` for bad schedule values.
 */
export function planRollingSummary(
  dialog: Dialog,
  schedule: RollingSummarySchedule,
  countTokens: (text: string) => number,
  labels: TranscriptLabels = {},
): SummaryPlan | null {
  if (!Number.isInteger(schedule.triggerTokens) || schedule.triggerTokens < 1) {
    throw new LlamaDialogError('InvalidParamValue', `triggerTokens must be a positive integer, got ${schedule.triggerTokens}`);
  }
  if (!Number.isInteger(schedule.keepRecentTurns) || schedule.keepRecentTurns < 0) {
    throw new LlamaDialogError('InvalidParamValue', `keepRecentTurns must be a non-negative integer, got ${schedule.keepRecentTurns}`);
  }
  const previous = dialog.latestSummary();
  const fromTurn = previous === null ? 0 : previous.coversThroughTurn + 1;
  const throughTurn = dialog.length - 1 - schedule.keepRecentTurns;
  if (throughTurn < fromTurn) return null;
  const turns = dialog.interactions.slice(fromTurn, throughTurn + 1);
  const lines = turns.map((turn) => turnTranscript(turn, labels));
  let pendingTokens = 0;
  for (const line of lines) pendingTokens += countTokens(line);
  if (pendingTokens < schedule.triggerTokens) return null;
  return { fromTurn, throughTurn, previousSummary: previous?.text ?? null, turns, transcript: lines.join('\n'), pendingTokens };
}

/** Default instructions of a Summarize node with an empty System Prompt. */
export const DEFAULT_SUMMARY_INSTRUCTIONS =
  'You keep a running summary of a conversation. Merge the previous summary (if any) and the new dialogue into one ' +
  'concise summary: where the scene is, who said what that matters, what was agreed, what is still open. ' +
  'Answer with the summary only.';

/**
 * Closing line of the request. It comes after the transcript because a model reads a transcript that ends on a
 * dialogue line as a conversation to continue: measured on Qwen2.5-1.5B-Instruct (memory set, docs/NOTES.md), the
 * third summary of a conversation answered the last customer line ("It seems like you're having trouble…") and lost
 * every fact the first two had kept.
 */
const SUMMARY_REQUEST = 'Now write the summary of this dialogue as instructed. Answer with the summary only.';
/** The same for a summary that extends a previous one: nothing the previous summary kept may fall out. */
const SUMMARY_UPDATE_REQUEST =
  'Now write the new summary as instructed: the previous summary with this dialogue merged in, keeping every fact ' +
  'of the previous summary. Answer with the summary only.';

/**
 * The messages a Summarize node sends: its instructions as system; as user, the previous summary, the transcript
 * under its header and closed by `[End of dialogue]` (so its last line reads as data, not as a line to answer),
 * then the request.
 */
export function buildSummaryMessages(plan: SummaryPlan, instructions: string = DEFAULT_SUMMARY_INSTRUCTIONS): ChatMessage[] {
  const previous = plan.previousSummary === null ? '' : `Previous summary:\n${plan.previousSummary}\n\n`;
  const request = plan.previousSummary === null ? SUMMARY_REQUEST : SUMMARY_UPDATE_REQUEST;
  return [
    { role: 'system', content: instructions.trim() === '' ? DEFAULT_SUMMARY_INSTRUCTIONS : instructions },
    {
      role: 'user',
      content: `${previous}Dialogue to add (turns ${plan.fromTurn}–${plan.throughTurn}):\n${plan.transcript}\n[End of dialogue]\n\n${request}`,
    },
  ];
}

/** One turn as transcript lines: the user line, visible replies, replayed tool pairs. */
export function turnTranscript(turn: Readonly<Interaction>, labels: TranscriptLabels = {}): string {
  const user = labels.user ?? 'User';
  const assistant = labels.assistant ?? 'Assistant';
  const lines = [`${user}: ${turn.userLine}`];
  for (const call of turn.toolCalls) {
    if (isToolCallReplayed(call)) lines.push(`[tool ${call.name}(${call.arguments}) returned: ${call.result ?? ''}]`);
  }
  for (const reply of turn.replies) if (reply.historyRole === 'Assistant') lines.push(`${assistant}: ${reply.text}`);
  return lines.join('\n');
}
