/**
 * Opening line of the compact knowledge block: it says the lines below are facts to answer from (data the game
 * wrote), not part of the player's words. Kept short on purpose: with placement.keep 'history' every turn that
 * brings a new chunk pays for it again (4 tokens with SmolLM2's and Gemma 3's tokenizers).
 */
export const KNOWLEDGE_BLOCK_LABEL = 'Known facts:';

/**
 * The compact form of a turn's knowledge (the template view's `knowledgeBlock`): the label once, whatever the number
 * of sources, then one chunk per line with no per-chunk markup. '' when the turn shows no chunk, so a template of
 * `{{knowledgeBlock}}` adds nothing to a turn whose retrieval found nothing new.
 */
export function formatKnowledgeBlock(texts: readonly string[]): string {
  return texts.length === 0 ? '' : `${KNOWLEDGE_BLOCK_LABEL}\n${texts.join('\n')}`;
}
