/**
 * Shapes of the tavern benchmark's results (`bench --workload tavern --json`): many agents on one model, player lines
 * arriving on a seeded Poisson schedule, every strategy replaying the same schedule. Times are milliseconds of wall
 * clock measured from the start of the scene (the first line can arrive at t > 0); byte figures are bytes.
 */

import type { TavernArrivals } from './tavern-schedule.js';
import type { TavernEngineSteps } from './tavern-engine-steps.js';

/** The strategies of the tavern workload. */
export const TAVERN_STRATEGY_NAMES = ['fifo', 'batched', 'batched-no-spawn', 'defaults', 'node-llama-cpp'] as const;
export type TavernStrategyName = (typeof TAVERN_STRATEGY_NAMES)[number];

/** One player line and its answer. */
export interface TavernLineRecord {
  /** 0-based agent. */
  agent: number;
  /** 0-based line of that agent. */
  lineOfAgent: number;
  /** When the schedule wanted the line said. */
  scheduledMs: number;
  /** When it was said: the later of `scheduledMs` and the end of the agent's previous turn. */
  arrivalMs: number;
  /** Time to first token: arrival → first streamed reply text; null when the reply was empty. */
  ttftMs: number | null;
  /** Arrival → turn complete. */
  turnMs: number;
  generatedTokens: number;
  /** Prompt tokens decoded for this line. */
  evaluatedTokens: number;
  /** Prompt tokens kept from the KV cache (or copied from another agent's); null when the strategy cannot tell. */
  reusedTokens: number | null;
}

/** Totals and spreads of one strategy. */
export interface TavernSummary {
  lines: number;
  ttftP50Ms: number | null;
  ttftP95Ms: number | null;
  turnP50Ms: number;
  turnP95Ms: number;
  /** First arrival → last completion. */
  wallMs: number;
  generatedTokens: number;
  /** generatedTokens ÷ wall seconds. */
  tokensPerSecond: number;
  evaluatedTokens: number;
  /**
   * Largest sum of the KV bytes of every live context, sampled at each arrival, first token and completion; null when
   * the strategy's engine does not say (node-llama-cpp).
   */
  peakKvBytes: number | null;
  /**
   * Largest sum of the KV bytes that hold tokens (same samples): a prefix shared by spawned sequences counts once.
   * null when the strategy's engine does not say.
   */
  peakKvBytesUsed: number | null;
  /** Largest resident set size sampled during the strategy's run (events and every 50 ms). */
  peakRssBytes: number;
  /** RSS when the strategy's scene started (after its models and contexts were loaded): strategies share a process. */
  rssAtStartBytes: number;
}

export interface TavernStrategyResult {
  strategy: TavernStrategyName;
  description: string;
  /** What the strategy asked for (catalog fields, node-llama-cpp's context options). */
  settings: Record<string, string | number | boolean>;
  /** `failed`: it could not run (e.g. a setting the runtime does not support yet); `error` says why. */
  status: 'ok' | 'failed';
  error: string | null;
  lines: TavernLineRecord[];
  summary: TavernSummary | null;
  /**
   * Share (0–1) of all CPUs' time that other processes used while this strategy played the scene (Linux; null
   * elsewhere, absent in older reports). Above 0.1 its figures were taken under contention.
   */
  othersCpuShare?: number | null;
  /** What the engine did, with `--profile` on a strategy of this package; null (or absent in older reports) otherwise. */
  engineSteps?: TavernEngineSteps | null;
  notes: string[];
}

/** strategy ÷ reference for the headline figures: below 1 is better for times and bytes, above 1 for tokens/s. */
export interface TavernRatio {
  strategy: TavernStrategyName;
  reference: 'fifo' | 'node-llama-cpp';
  ttftP50: number | null;
  ttftP95: number | null;
  turnP50: number | null;
  turnP95: number | null;
  tokensPerSecond: number | null;
  evaluatedTokens: number | null;
  peakKvBytes: number | null;
  peakKvBytesUsed: number | null;
  peakRssBytes: number | null;
}

/** Where a run was taken, so reports from different machines compare. */
export interface BenchMachine {
  /** `cpu`, `cuda`, `metal`, `vulkan`, … (from llama.cpp's system info). */
  backend: string;
  /** The GPU's name, or the CPU's model name on a CPU backend. */
  device: string;
  /** Total memory of the GPU; null on a CPU backend or when it cannot be read. */
  vramBytes: number | null;
  /** Layers offloaded, as given to the model load; null = the engine's default (every layer on a GPU build). */
  gpuLayers: number | null;
  cpu: string;
  cpuCount: number;
  platform: string;
  node: string;
  /** llama.cpp's system-info line. */
  llamaCpp: string;
}

export interface TavernReport {
  tool: 'llama-dialog bench';
  kind: 'tavern';
  schemaVersion: 1;
  startedAt: string;
  workload: {
    name: 'tavern';
    version: string;
    /** SHA-256 prefix over scene, schedule and settings: same fingerprint, same work. */
    fingerprint: string;
    agents: number;
    linesPerAgent: number;
    /** When lines are said (see TavernArrivals); meanGapMs applies to poisson only. */
    arrivals: TavernArrivals;
    meanGapMs: number;
    seed: number;
    loreTokens: number;
    /** KV tokens per agent. */
    contextSize: number;
    maxTokens: number;
    threads: number;
    sampling: 'greedy';
  };
  machine: BenchMachine;
  model: { path: string; architecture: string; parameterCount: number; fileSize: number; synthetic: boolean };
  strategies: TavernStrategyResult[];
  ratios: TavernRatio[];
  notes: string[];
}
