/**
 * Per-turn diagnostics (SPEC §7): plain JSON, produced only when the agent has `enableDiagnostics`.
 */

import type { CacheMissCause as ProjectionCacheMissCause } from '../prompt/node-prompt-projector.js';
import type {
  NodeInputDiagnostics,
  NodeOutputDiagnostics,
  NodeTimingDiagnostics,
  PromptMessageDiagnostics,
} from '../graph/node-step-diagnostics.js';

export type { NodeInputDiagnostics, NodeOutputDiagnostics, NodeTimingDiagnostics, PromptMessageDiagnostics };

/**
 * Why a node's KV cache could not reuse its previous prompt + reply: the projector's causes (firstTurn, trim,
 * newSummary, systemPromptChanged, historyEdited, templateChanged, previousTurnNotReplayed) plus `cacheReleased`
 * (releaseCache) and `unknown`.
 */
export type CacheMissCause = ProjectionCacheMissCause | 'cacheReleased' | 'unknown';

export interface NodeCacheDiagnostics {
  /** Tokens kept from the KV cache. */
  reused: number;
  /** Tokens decoded for this prompt. */
  evaluated: number;
  /** Tokens the node could have kept (its previous prompt + reply shared with this prompt; 0 on a first turn). */
  expectedReuse: number;
  miss: boolean;
  /** Likely causes, most specific first; empty when there was no miss. */
  causes: CacheMissCause[];
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
