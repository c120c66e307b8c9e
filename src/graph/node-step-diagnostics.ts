import type { GenerateStepProfile } from '../engine/types.js';
import type { ProjectionDiagnostics } from '../prompt/node-prompt-projector.js';

/*
 * What a node reports about one step. The graph declares these shapes and the recorder interface because they are
 * part of the node contract; src/diag implements the recorder, explains cache misses and assembles the turn's
 * diagnostics (diag imports graph, never the reverse).
 */

/** One message of a prompt exactly as the model received it. */
export interface PromptMessageDiagnostics {
  role: string;
  content: string;
  /** Tokens this message takes in the decoded prompt (template markup included). */
  tokens: number;
}

export interface NodeInputDiagnostics {
  prompt: PromptMessageDiagnostics[];
  promptTokens: number;
  /** contextSize − maxTokens. */
  budget: number;
  contextSize: number;
  turnsTrimmed: number;
  /** Dialog turn (0-based) of the earliest earlier turn in the prompt, null when none. */
  firstTurnInPrompt: number | null;
  historyTurnsInPrompt: number;
  /** The summary appended to the system message, if any. */
  summaryUsed: { node: string; coversThroughTurn: number; writtenInTurn: number } | null;
  /** Chat template in use (e.g. `gguf`, `builtin:chatml`). */
  template: string;
  segmentCacheUsed: boolean;
  /** True when the chat template is not prefix-stable and whole prompts are rendered. */
  fallbackToWholePrompt: boolean;
  /**
   * The turn's knowledge in this node's template (projected prompts): chunks shown and their tokens, chunks left out
   * because a kept template in the history shows them, chunks cut by maxKnowledgeTokens.
   */
  knowledge?: { shown: number; tokens: number; alreadyInHistory: number; dropped: { id: string | null; source: string | null; tokens: number }[] };
}

export interface NodeOutputDiagnostics {
  text: string;
  tokens: number;
  stopReason: string;
  /**
   * Prompt-lookup drafting (GenerateOptions.draftTokens): tokens guessed and decoded beside the sampled ones, and how
   * many of them the sampler kept (each kept one saved a decode step). Absent when the engine reports none.
   */
  draftedTokens?: number;
  acceptedDraftTokens?: number;
}

export interface NodeTimingDiagnostics {
  promptMs: number;
  firstTokenMs: number;
  generateMs: number;
  /** Every engine step of the generation (one llama_decode each), when the session profiles the decode loop. */
  decodeSteps?: GenerateStepProfile[];
}

/** Everything one inference call of a node contributes to its diagnostics, handed over in one piece. */
export interface InferenceRecord {
  /** The prompt exactly as sent, and its figures. */
  input: NodeInputDiagnostics;
  /** Prompt tokens the node's cache kept and decoded (from the host's answer). */
  reuse: { reused: number; evaluated: number };
  /** What the projector expected the cache to keep, and the miss it foresaw (projected prompts only). */
  projection?: Pick<ProjectionDiagnostics, 'reusablePrefixTokens' | 'trimmed' | 'changes'>;
  output?: NodeOutputDiagnostics;
  timings?: NodeTimingDiagnostics;
}

/**
 * The diagnostics of one node step, as the node sees them. When diagnostics are off, `enabled` is false and every
 * method does nothing, so nodes can call it unconditionally and skip only expensive preparation.
 */
export interface NodeStepDiagnostics {
  readonly enabled: boolean;
  /** Records an inference call (the latest one wins when a node makes several). */
  recordInference(record: InferenceRecord): void;
  /** Records an answer written without inference (CannedResponse). */
  recordOutput(output: NodeOutputDiagnostics): void;
  /** Node-specific facts (classifier scores, guardrail match, tool calls, ...), merged into earlier ones. */
  addData(data: Record<string, unknown>): void;
  warn(message: string): void;
}
