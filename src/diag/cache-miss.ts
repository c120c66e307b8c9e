import type { CacheFacts } from '../graph/node-run-context.js';
import type { CacheMissCause, NodeCacheDiagnostics } from './turn-diagnostics.js';

/** What a prompt projection reports that can explain a changed prefix. */
export interface ProjectionFacts {
  /** Turns dropped from this node's prompt during this projection. */
  turnsTrimmed: number;
  /** A summary newer than the one the node used last time is in the system message. */
  newSummary: boolean;
}

/**
 * Explains a cache figure: a miss is reusing fewer tokens than the node expected to keep. Causes are listed from the
 * most to the least specific; `unknown` when none of the known facts applies.
 */
export function explainCache(
  figures: { reused: number; evaluated: number; expectedReuse: number },
  facts: CacheFacts,
  projection: ProjectionFacts,
): NodeCacheDiagnostics {
  const miss = figures.reused < figures.expectedReuse || (facts.firstUse && figures.evaluated > 0 && figures.reused === 0);
  const causes: CacheMissCause[] = [];
  if (miss) {
    if (facts.firstUse) causes.push('firstTurn');
    if (facts.released) causes.push('cacheReleased');
    if (facts.historyEdited) causes.push('historyEdited');
    if (facts.changedParams.includes('systemPrompt')) causes.push('systemPromptChanged');
    if (facts.changedParams.includes('template') || facts.changedParams.includes('placement')) {
      causes.push('templateChanged');
    }
    const otherParams = facts.changedParams.filter((p) => !['systemPrompt', 'template', 'placement'].includes(p));
    if (otherParams.length > 0) causes.push('paramsChanged');
    if (projection.newSummary) causes.push('newSummary');
    if (projection.turnsTrimmed > 0) causes.push('trim');
    if (causes.length === 0) causes.push('unknown');
  }
  return { ...figures, miss, causes };
}
