/**
 * Shapes of benchmark results: what each strategy measured per turn and per node, the per-strategy summary,
 * and the whole report written by `--json`. Times are milliseconds of wall clock, token counts are exact.
 */
import type { GenerateStepProfile } from '../engine/types.js';

/** The strategies a run can compare. `ours` is the agent runtime; the others are baselines. */
export const STRATEGY_NAMES = ['ours', 'node-llama-cpp', 'node-llama-cpp-lookup', 'naive', 'trim-to-fit'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

/** What one LLM call of one node cost on one turn. */
export interface NodeCallMetrics {
  node: string;
  nodeType: string;
  /** Tokens of the prompt as decoded (exact). */
  promptTokens: number;
  /** Prompt tokens kept from the KV cache. */
  reusedTokens: number;
  /** Prompt tokens decoded by this call. */
  evaluatedTokens: number;
  generatedTokens: number;
  /** Prompt-lookup drafting (GenerateOptions.draftTokens): tokens guessed, and of them kept; absent without it. */
  draftedTokens?: number;
  acceptedDraftTokens?: number;
  /** Whole turns dropped from this node's prompt on this call. */
  trimmedTurns: number;
  /** True when this call wrote a new rolling summary. */
  summaryWritten: boolean;
  /** From the start of the call to its first sampled token; null when it produced none. */
  firstTokenMs: number | null;
  totalMs: number;
  /**
   * Time inside llama.cpp (prompt decode + generation) by the engine's own clock; the rest of `totalMs` is the
   * runtime's own work (projection, scheduling, streaming). null when the strategy cannot tell.
   */
  engineMs: number | null;
  /** See PromptCall.rereadFrom in ideal-evaluation.ts. */
  rereadFrom: number | null;
  /** Why the cache missed, as the runtime's diagnostics say (null when it did not miss or cannot say). */
  cacheMissCause: string | null;
  /** Every engine step of the generation, when the run profiled the decode loop (`bench --profile`). */
  decodeSteps?: GenerateStepProfile[];
}

/** One turn of one strategy: the player's line in, the reply out. */
export interface TurnMetrics {
  /** 1-based. */
  turn: number;
  /** From sending the line to the end of the turn (every node, including a trailing Summarize). */
  wallMs: number;
  /** From sending the line to the first streamed reply text. */
  firstTokenMs: number | null;
  /**
   * From sending the line to the turn's final answer — what the player waits for. Shorter than `wallMs` when a
   * node after the answer (Summarize) still runs.
   */
  answerMs: number;
  /** Sum of the nodes' engineMs; null when any of them is unknown. */
  engineMs: number | null;
  /** Sums over `nodes`. */
  promptTokens: number;
  reusedTokens: number;
  evaluatedTokens: number;
  generatedTokens: number;
  trims: number;
  summaryWrites: number;
  /** Ideal evaluated tokens (see ideal-evaluation.ts); null when the strategy cannot tell its prompt layout. */
  idealEvaluatedTokens: number | null;
  nodes: NodeCallMetrics[];
  reply: string;
}

/** Totals and spreads over all turns of one strategy. */
export interface StrategySummary {
  turns: number;
  totalWallMs: number;
  medianTurnMs: number;
  p95TurnMs: number;
  medianFirstTokenMs: number;
  p95FirstTokenMs: number;
  /** Time to the final answer (see TurnMetrics.answerMs). */
  medianAnswerMs: number;
  p95AnswerMs: number;
  totalPromptTokens: number;
  totalReusedTokens: number;
  totalEvaluatedTokens: number;
  totalGeneratedTokens: number;
  medianEvaluatedTokens: number;
  p95EvaluatedTokens: number;
  totalTrims: number;
  totalSummaryWrites: number;
  /** null when the strategy has no ideal figure. */
  totalIdealEvaluatedTokens: number | null;
  /** totalEvaluated / totalIdeal. */
  evaluatedOverIdeal: number | null;
  /** Turns without a trim or summary write: the "normal turn" the llama-bench floor is compared with. */
  normalTurns: number;
  medianNormalTurnMs: number;
  /** Median over normal turns of the time outside llama.cpp (wallMs − engineMs); null when engineMs is unknown. */
  medianNormalTurnOverheadMs: number | null;
  /** Prompt-lookup drafting: tokens guessed and decoded beside sampled ones, and of them kept; absent without it. */
  totalDraftedTokens?: number;
  totalAcceptedDraftTokens?: number;
}

export interface StrategyResult {
  strategy: StrategyName;
  /** One line saying what the strategy does. */
  description: string;
  turns: TurnMetrics[];
  summary: StrategySummary;
  /** Caveats worth printing (how a figure was derived, what could not be measured). */
  notes: string[];
}

/** ours ÷ baseline for the headline figures (below 1 means ours is better). */
export interface BaselineRatio {
  baseline: StrategyName;
  totalWall: number;
  evaluatedTokens: number;
  medianFirstToken: number;
  medianTurn: number;
}

/** One of ours' normal turns and llama-bench running the same shape right after it. */
export interface FloorPair {
  turn: number;
  /** Tokens the turn reused from the cache (llama-bench -d). */
  depth: number;
  /** New prompt tokens (the first figure of -pg). */
  promptTokens: number;
  /** Generated tokens (the second figure of -pg). */
  generatedTokens: number;
  /** Ours' wall time of the turn. */
  oursMs: number;
  /** llama-bench's time for the same prefill + decode. */
  floorMs: number;
}

/**
 * The cost of a normal turn as llama-bench measures it (prefill of the new tokens + decode of the reply on a cache
 * as deep as the turn's reuse), sampled right after some of ours' turns (see paired-floor-sampler.ts).
 */
export interface LlamaBenchFloor {
  binary: string;
  pairs: FloorPair[];
  /** Medians of the pairs' shapes, for the report's one-line summary. */
  depth: number;
  promptTokens: number;
  generatedTokens: number;
  /** Median of the pairs' llama-bench times. */
  floorMs: number;
  /** The floor as a function of depth: the Theil–Sen line through the pairs' (depth, llama-bench ms). */
  floorLine: { interceptMs: number; msPerDepthToken: number };
  /** Normal turns of ours compared with the line. */
  normalTurns: number;
  /** Median wall time of all of ours' normal turns. */
  oursMedianNormalTurnMs: number;
  /**
   * Median over all of ours' normal turns of wall time ÷ the floor line at the turn's depth: the figure the goal is
   * checked against.
   */
  ratio: number;
  /** Median over the pairs alone of ours ÷ llama-bench (8 single samples on each side: noisier), and its range. */
  pairedRatio: number;
  lowestPairedRatio: number;
  highestPairedRatio: number;
}

/** One of the benchmark's targets, checked against this run. */
export interface GoalCheck {
  goal: string;
  value: number | null;
  limit: number;
  met: boolean | null;
}

export interface BenchEnvironment {
  /** e.g. "cpu" or "cuda". */
  backend: string;
  /** e.g. the CPU model name, or the GPU's name. */
  device: string;
  threads: number;
  contextSize: number;
  model: {
    path: string;
    architecture: string;
    parameterCount: number;
    fileSize: number;
    /** True when the CLI generated the synthetic model for this run. */
    synthetic: boolean;
  };
  node: string;
  platform: string;
  cpuCount: number;
  /** 1-minute load averages at the start and end: high values mean figures were taken under contention. */
  loadAverageAtStart: number;
  /** Set by the runner when it finishes. */
  loadAverageAtEnd?: number;
  /**
   * Share (0–1) of all CPUs' time that other processes used during the run (Linux /proc/stat; null elsewhere).
   * Set by the runner. Above 0.1, the figures were taken under contention.
   */
  othersCpuShare?: number | null;
}

export interface BenchReport {
  tool: 'llama-dialog bench';
  /** Version of this report's shape. */
  schemaVersion: 1;
  startedAt: string;
  /** How the strategies' turns were scheduled (see RunOrder in benchmark-runner.ts). */
  order: 'interleaved' | 'sequential';
  workload: {
    name: string;
    version: string;
    fingerprint: string;
    turns: number;
    contextSize: number;
    maxTokens: number;
    trimTarget: number;
    summarize: boolean;
  };
  environment: BenchEnvironment;
  strategies: StrategyResult[];
  ratios: BaselineRatio[];
  floor: LlamaBenchFloor | null;
  /** Why the floor is missing (binary not found, failed run), when it is. */
  floorNote: string | null;
  goals: GoalCheck[];
  /** Run-level notes (a baseline skipped, ...). */
  notes: string[];
}
