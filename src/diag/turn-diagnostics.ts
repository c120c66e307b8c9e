/**
 * Per-turn diagnostics (SPEC §7): plain JSON, produced only when the agent has `enableDiagnostics`.
 */

import type { CacheMissCause } from './cache-reuse.js';
import type { SharedPrefixSource } from './cache-facts.js';
import type {
  NodeInputDiagnostics,
  NodeOutputDiagnostics,
  NodeTimingDiagnostics,
  PromptMessageDiagnostics,
} from '../graph/node-step-diagnostics.js';

export type { NodeInputDiagnostics, NodeOutputDiagnostics, NodeTimingDiagnostics, PromptMessageDiagnostics };

export type { CacheMissCause };

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
  /** The cache had been moved to RAM by the model's KV budget and was restored from there (reused, not re-read). */
  restoredFromSnapshot?: boolean;
  /** Shared-prefix spawn: `tokens` of the prompt were copied from another agent's live sequence, not decoded. */
  sharedFrom?: SharedPrefixSource;
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
