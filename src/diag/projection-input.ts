import type { PromptProjection } from '../prompt/node-prompt-projector.js';
import type { NodeInputDiagnostics } from './turn-diagnostics.js';

/** The `input` block of a node's diagnostics from its projection: the prompt exactly as sent, and its figures. */
export function inputDiagnostics(projection: PromptProjection): NodeInputDiagnostics {
  const d = projection.diagnostics;
  return {
    prompt: projection.messages.map((message) => ({ role: message.role, content: message.content, tokens: message.tokenCount })),
    promptTokens: d.promptTokens,
    budget: d.budget,
    contextSize: d.contextSize,
    turnsTrimmed: d.turnsDroppedThisTurn,
    firstTurnInPrompt: d.firstTurnInPrompt,
    historyTurnsInPrompt: d.historyTurnsInPrompt,
    summaryUsed: d.summaryUsed,
    template: d.template,
    segmentCacheUsed: d.segmentCacheUsed,
    fallbackToWholePrompt: d.fallbackToWholePrompt,
  };
}
