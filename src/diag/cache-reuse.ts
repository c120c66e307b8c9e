import type { ProjectionDiagnostics } from '../prompt/node-prompt-projector.js';

/**
 * Why a node's KV cache could not reuse its previous prompt + reply (SPEC §7); the one list of causes.
 * - firstTurn: the node's first prompt (or first after its cache was created).
 * - trim: this prompt dropped turns. newSummary: a newer summary replaced the one in the system message.
 * - systemPromptChanged, templateChanged (template, placement, input slot, tool result limit): changeParam.
 * - historyEdited: the dialog was seeded, imported, edited or truncated.
 * - previousTurnNotReplayed: the previous prompt showed something later prompts never replay: the current turn's
 *   framing (node Template, knowledge), a hidden (`None`) reply of an earlier node of that turn, or this node's own
 *   hidden reply.
 * - replyRenderedDifferently: the template renders a past reply without the scaffolding its generation prompt put
 *   before it (Gemma 4's empty thought channel), and the node follows the template's rendering of history
 *   (`replayGenerationScaffolding: false`), so the previous reply is re-read.
 * - cacheReleased: `releaseCache()` freed the KV memory.
 * - snapshotDropped: the model's KV budget had moved this cache to a RAM snapshot, and the snapshot budget dropped it.
 * - unknown: fewer tokens reused than expected, no cause seen.
 */
export type CacheMissCause =
  | 'firstTurn'
  | 'trim'
  | 'newSummary'
  | 'systemPromptChanged'
  | 'historyEdited'
  | 'templateChanged'
  | 'previousTurnNotReplayed'
  | 'replyRenderedDifferently'
  | 'cacheReleased'
  | 'snapshotDropped'
  | 'unknown';

/**
 * The miss a projection foresees from what changed since the node's previous prompt, or null when the whole
 * previous prompt + reply is reusable. The first applicable cause wins, most specific first.
 */
export function projectionMissCause(
  projection: Pick<ProjectionDiagnostics, 'reusablePrefixTokens' | 'trimmed' | 'changes'>,
): CacheMissCause | null {
  if (projection.reusablePrefixTokens === null) return 'firstTurn';
  const { changes } = projection;
  if (changes.fullyReusable) return null;
  if (projection.trimmed) return 'trim';
  if (changes.summaryChanged) return 'newSummary';
  if (changes.systemPromptChanged) return 'systemPromptChanged';
  if (changes.historyEdited) return 'historyEdited';
  if (changes.renderingChanged) return 'templateChanged';
  if (changes.replyRenderedDifferently) return 'replyRenderedDifferently';
  return 'previousTurnNotReplayed';
}
