import type { GenerateResult } from '../../engine/types.js';
import type { ChatMessage } from '../../prompt/chat-message.js';
import type { PromptProjection } from '../../prompt/node-prompt-projector.js';
import type { AssembledPrompt } from '../../prompt/prompt-assembler.js';
import type { InferenceRecord, NodeInputDiagnostics } from '../node-step-diagnostics.js';

/** The `input` block of a projected prompt (Generate, ToolCall): the prompt exactly as sent, and its figures. */
export function projectedPromptInput(projection: PromptProjection): NodeInputDiagnostics {
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
    knowledge: d.knowledge,
  };
}

/**
 * The `input` block of a prompt a node assembled itself (classifiers, Summarize): never trimmed, no summary
 * appended; `history` says which dialog turns it shows.
 */
export function assembledPromptInput(
  messages: readonly ChatMessage[],
  assembled: AssembledPrompt,
  figures: {
    budget: number;
    contextSize: number;
    template: string;
    history?: { firstTurnInPrompt: number; historyTurnsInPrompt: number };
  },
): NodeInputDiagnostics {
  return {
    prompt: messages.map((message, index) => ({ role: message.role, content: message.content, tokens: assembled.messageTokenCounts[index] ?? 0 })),
    promptTokens: assembled.tokens.length,
    budget: figures.budget,
    contextSize: figures.contextSize,
    turnsTrimmed: 0,
    firstTurnInPrompt: figures.history?.firstTurnInPrompt ?? null,
    historyTurnsInPrompt: figures.history?.historyTurnsInPrompt ?? 0,
    summaryUsed: null,
    template: figures.template,
    segmentCacheUsed: assembled.segmentCacheUsed,
    fallbackToWholePrompt: assembled.fallbackToWholePrompt,
  };
}

/** A generation's record: the host's reuse figures, the output (as the node keeps it) and the timings. */
export function generationRecord(
  input: NodeInputDiagnostics,
  result: GenerateResult,
  options: { outputText?: string; projection?: PromptProjection } = {},
): InferenceRecord {
  const { timings } = result;
  return {
    input,
    reuse: { reused: timings.promptReused, evaluated: timings.promptEvaluated },
    ...(options.projection ? { projection: options.projection.diagnostics } : {}),
    output: {
      text: options.outputText ?? result.text,
      tokens: result.tokens.length,
      stopReason: result.stopReason,
      ...(timings.draftedTokens !== undefined ? { draftedTokens: timings.draftedTokens, acceptedDraftTokens: timings.acceptedDraftTokens ?? 0 } : {}),
    },
    timings: {
      promptMs: timings.promptMs,
      firstTokenMs: timings.firstTokenMs,
      generateMs: timings.generateMs,
      ...(result.profile ? { decodeSteps: result.profile.steps } : {}),
    },
  };
}
