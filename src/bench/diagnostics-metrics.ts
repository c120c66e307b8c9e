import type { NodeDiagnostics } from '../diag/turn-diagnostics.js';
import type { NodeCallMetrics } from './bench-result.js';

/**
 * Figures of one node from its diagnostics; nodes that called no model (a Summarize node below its trigger)
 * give none.
 */
export function nodeMetrics(node: NodeDiagnostics): NodeCallMetrics[] {
  if (!node.input || !node.cache) return [];
  const systemTokens = node.input.prompt[0]?.role === 'system' ? node.input.prompt[0].tokens : 0;
  const causes = node.cache.causes;
  const summaryWritten = node.type === 'Summarize';
  let rereadFrom: number | null = null;
  // A trim moves the history start to just after the system message (BOS and template markup included in its
  // count), which stays cached. A Summarize node keeps its instructions and reads a fresh transcript after them.
  // A new summary changes the system message itself: the projector's expected reuse (its own previous prompt and
  // reply against this prompt, token by token) says where — independent of what the engine actually kept.
  if (node.input.turnsTrimmed > 0 || summaryWritten) rereadFrom = systemTokens;
  if (causes.includes('newSummary')) rereadFrom = Math.min(node.cache.expectedReuse, systemTokens);
  return [
    {
      node: node.name,
      nodeType: node.type,
      promptTokens: node.input.promptTokens,
      reusedTokens: node.cache.reused,
      evaluatedTokens: node.cache.evaluated,
      generatedTokens: node.output?.tokens ?? 0,
      ...(node.output?.draftedTokens !== undefined
        ? { draftedTokens: node.output.draftedTokens, acceptedDraftTokens: node.output.acceptedDraftTokens ?? 0 }
        : {}),
      trimmedTurns: node.input.turnsTrimmed,
      summaryWritten,
      firstTokenMs: node.timings ? node.timings.firstTokenMs : null,
      totalMs: node.ms,
      engineMs: node.timings ? node.timings.promptMs + node.timings.generateMs : null,
      rereadFrom,
      cacheMissCause: node.cache.miss ? (causes[0] ?? 'unknown') : null,
      ...(node.timings?.decodeSteps ? { decodeSteps: node.timings.decodeSteps } : {}),
    },
  ];
}
