/**
 * Per-turn diagnostics (SPEC §7): plain JSON, produced only when the agent has `enableDiagnostics`.
 */

/** Why a node's KV cache could not reuse what it held. */
export type CacheMissCause =
  | 'firstTurn'
  | 'cacheReleased'
  | 'historyEdited'
  | 'systemPromptChanged'
  | 'templateChanged'
  | 'paramsChanged'
  | 'newSummary'
  | 'trim'
  | 'unknown';

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
  turnsTrimmed: number;
  /** Index (1-based turn number) of the earliest earlier turn in the prompt, null when none. */
  firstTurnInPrompt: number | null;
  summaryUsed: boolean;
  /** Extra facts from the projector (segment cache used, whole-prompt fallback, ...). */
  notes?: Record<string, unknown>;
}

export interface NodeCacheDiagnostics {
  /** Tokens kept from the KV cache. */
  reused: number;
  /** Tokens decoded for this prompt. */
  evaluated: number;
  /** Tokens the node expected to keep (what its cache held that is still meant to be a prefix). */
  expectedReuse: number;
  miss: boolean;
  /** Likely causes, most specific first; empty when there was no miss. */
  causes: CacheMissCause[];
}

export interface NodeOutputDiagnostics {
  text: string;
  tokens: number;
  stopReason: string;
}

export interface NodeTimingDiagnostics {
  promptMs: number;
  firstTokenMs: number;
  generateMs: number;
}

export interface NodeDiagnostics {
  name: string;
  type: string;
  step: number;
  /** Exit taken, null when the node did not finish (error, cancel). */
  exit: string | null;
  ms: number;
  input?: NodeInputDiagnostics;
  cache?: NodeCacheDiagnostics;
  output?: NodeOutputDiagnostics;
  timings?: NodeTimingDiagnostics;
  /** Node-specific facts (classifier scores, guardrail match, tool calls, ...). */
  data?: Record<string, unknown>;
  warnings: string[];
  error?: string;
}

export interface TurnDiagnostics {
  agentId: string;
  turn: number;
  userText: string;
  status: string;
  startedAt: string;
  totalMs: number;
  steps: number;
  tokensGenerated: number;
  nodes: NodeDiagnostics[];
}
