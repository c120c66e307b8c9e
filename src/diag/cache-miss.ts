import type { CacheFacts } from './cache-facts.js';
import type { ProjectionDiagnostics } from '../prompt/node-prompt-projector.js';
import { projectionMissCause, type CacheMissCause } from './cache-reuse.js';
import type { NodeCacheDiagnostics } from './turn-diagnostics.js';

/**
 * Explains a node's cache figures for one prompt: a miss is any turn where the KV cache could not keep the node's
 * whole previous prompt + reply. Causes combine what the projector saw (trim, new summary, edited history, changed
 * system prompt, ...) with what only the host knows (the cache was released, its RAM snapshot dropped). A restore from
 * a snapshot or a shared-prefix spawn is no miss; both are reported beside the figures.
 */
export function explainCache(
  figures: { reused: number; evaluated: number },
  projection: Pick<ProjectionDiagnostics, 'reusablePrefixTokens' | 'trimmed' | 'changes'> | undefined,
  facts: CacheFacts,
): NodeCacheDiagnostics {
  const expectedReuse = projection?.reusablePrefixTokens ?? 0;
  const causes: CacheMissCause[] = [];
  if (facts.released) causes.push('cacheReleased');
  if (facts.snapshotDropped) causes.push('snapshotDropped');
  const projected = projection ? projectionMissCause(projection) : null;
  // The projector itself names param changes that re-frame the prompt (systemPromptChanged, templateChanged).
  if (projected !== null) causes.push(projected);
  else if (facts.firstUse && !projection) causes.push('firstTurn');
  const miss = causes.length > 0 || figures.reused < expectedReuse;
  if (miss && causes.length === 0) causes.push('unknown');
  const explained: NodeCacheDiagnostics = { reused: figures.reused, evaluated: figures.evaluated, expectedReuse, miss, causes: [...new Set(causes)] };
  if (facts.restoredFromSnapshot) explained.restoredFromSnapshot = true;
  if (facts.sharedFrom) explained.sharedFrom = { ...facts.sharedFrom };
  return explained;
}
