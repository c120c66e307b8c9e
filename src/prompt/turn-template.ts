import Mustache from 'mustache';
import type { Interaction, KnowledgeItem } from '../dialog/interaction.js';
import { LlamaDialogError } from '../errors.js';
import { formatKnowledgeBlock } from './knowledge-block.js';

/** Where a node's rendered Template goes relative to the current user line, and as which role. */
export interface TemplatePlacement {
  /** `before` or `after` the user's line (default `before`). */
  position: 'before' | 'after';
  /** `system`: a message of its own; `user`: joined to the user's message with a blank line (default `system`). */
  role: 'system' | 'user';
  /**
   * How long the rendered template stays in the prompt. `turn` (default, the reference's rule): the current turn
   * only, so on the next turn the prompt changes where it stood and the last user line and reply are decoded again.
   * `history`: it stays with its turn, replayed exactly as it was sent, so every normal turn extends the cache; and
   * knowledge already shown by a kept template still in the history is not repeated (docs/KNOWLEDGE.md, "The cache").
   */
  keep: 'turn' | 'history';
}

export const DEFAULT_TEMPLATE_PLACEMENT: Readonly<TemplatePlacement> = Object.freeze({ position: 'before', role: 'system', keep: 'turn' });

/**
 * The view a node Template is rendered with (Mustache, no HTML escaping). Agent variables are also spread at the
 * top level (the names below win over a variable of the same name).
 * - `input`: the text this node answers (user line or its Input slot); `userLine`: the user's line.
 * - `slots`: the turn's input slots. `instructions`: name → text of this turn's instructions;
 *   `instructionList`: `[{ name, text }]`; `instruction_<name>`: the text (the reference's spelling).
 * - Knowledge, in the reference's shapes: `knowledge` is one entry per source (a Retrieve node's label), in the order
 *   they were attached, `{ name, has_chunks, chunks: [{ id, text, distance }] }`; `knowledge_<source>` is that
 *   source's chunks. Beside them the flat forms: `knowledgeList` `[{ id, text, source, score }]`, `knowledgeText`
 *   (the texts joined by blank lines) and `hasKnowledge`; `knowledgeBlock`, the compact labelled form (one label for
 *   every source, one chunk per line, '' when no chunk is shown: the cheapest per turn with placement.keep
 *   'history'). `variables`: the agent variables.
 */
export function buildTemplateView(
  turn: Readonly<Interaction>,
  input: string,
  variables: Readonly<Record<string, unknown>>,
  knowledgeItems: readonly KnowledgeItem[] = turn.knowledge,
): Record<string, unknown> {
  const instructions: Record<string, string> = {};
  const instructionKeys: Record<string, string> = {};
  for (const instruction of turn.instructions) {
    instructions[instruction.name] = instruction.text;
    instructionKeys[`instruction_${instruction.name}`] = instruction.text;
  }
  const bySource = new Map<string, { id: string | null; text: string; distance: number | null }[]>();
  for (const item of knowledgeItems) {
    const source = item.source ?? 'knowledge';
    let chunks = bySource.get(source);
    if (!chunks) bySource.set(source, (chunks = []));
    chunks.push({ id: item.id, text: item.text, distance: item.score });
  }
  const sourceKeys: Record<string, unknown> = {};
  for (const [source, chunks] of bySource) sourceKeys[`knowledge_${source}`] = chunks;
  return {
    ...variables,
    ...instructionKeys,
    ...sourceKeys,
    variables,
    input,
    userLine: turn.userLine,
    slots: turn.slots,
    instructions,
    instructionList: turn.instructions.map((item) => ({ name: item.name, text: item.text })),
    knowledge: [...bySource].map(([name, chunks]) => ({ name, has_chunks: chunks.length > 0, chunks })),
    knowledgeList: knowledgeItems.map((item) => ({ id: item.id, text: item.text, source: item.source, score: item.score })),
    knowledgeText: knowledgeItems.map((item) => item.text).join('\n\n'),
    hasKnowledge: knowledgeItems.length > 0,
    knowledgeBlock: formatKnowledgeBlock(knowledgeItems.map((item) => item.text)),
  };
}

/**
 * Renders a node Template with Mustache, without HTML escaping.
 * @throws LlamaDialogError `TemplateRenderFailed` on a malformed template (unclosed tag or section).
 */
export function renderTurnTemplate(template: string, view: Record<string, unknown>): string {
  try {
    return Mustache.render(template, view, {}, { escape: (value: unknown) => String(value) });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new LlamaDialogError('TemplateRenderFailed', `The node template failed to render: ${detail}`, { cause: error });
  }
}
