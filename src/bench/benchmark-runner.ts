import { loadavg } from 'node:os';
import type { BenchEnvironment, BenchReport, StrategyResult, TurnMetrics } from './bench-result.js';
import type { BenchStrategy } from './bench-strategy.js';
import { CpuContentionMeter } from './cpu-contention-meter.js';
import { PairedFloorSampler, type FloorOutcome } from './paired-floor-sampler.js';
import { ProgressBar, type ProgressStream } from '../util/progress-bar.js';
import { baselineRatios, checkGoals, summarizeTurns, withIdealEvaluation } from './strategy-summary.js';
import type { Workload } from './workloads.js';

/**
 * `interleaved` (default): every strategy is prepared first, then each turn is run by every strategy before the
 * next turn starts, the first strategy rotating from turn to turn — on a machine whose load changes over time
 * (shared CI, other jobs), all strategies see the same conditions. `sequential`: one whole conversation after
 * the other, only one model in memory at a time.
 */
export type RunOrder = 'interleaved' | 'sequential';

export interface BenchmarkRunOptions {
  workload: Workload;
  modelPath: string;
  environment: BenchEnvironment;
  /** `ours` first, then the baselines. Turns never overlap: strategies share the CPU. */
  strategies: readonly BenchStrategy[];
  /** Default `interleaved`. */
  order?: RunOrder;
  /** llama-bench binary for the floor column; null skips it with a note. */
  llamaBench: string | null;
  /** How many of ours' normal turns get a llama-bench twin (default 8; 0 measures no floor). */
  floorSamples?: number;
  /** Where progress bars go (default process.stderr); null for none. */
  progress?: ProgressStream | null;
  /** Status lines (default: to stderr). */
  log?: (line: string) => void;
  /** Run-level notes to carry into the report. */
  notes?: readonly string[];
}

/**
 * Runs every strategy over the workload's lines and builds the report: per-turn figures, summaries, ideal
 * evaluated tokens, ratios of ours against each baseline, the llama-bench floor and the benchmark's targets.
 * Model loading and context creation are not timed; a turn is timed from sending the line to its end.
 */
export async function runBenchmark(options: BenchmarkRunOptions): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const startedAt = new Date().toISOString();
  const contention = new CpuContentionMeter();
  const sampler = floorSampler(options);
  const afterTurn = async (strategy: BenchStrategy, turn: TurnMetrics): Promise<void> => {
    if (strategy.name === 'ours') await sampler?.afterTurn(turn);
  };
  const turnsByStrategy =
    (options.order ?? 'interleaved') === 'interleaved'
      ? await runInterleaved(options, log, afterTurn)
      : await runSequential(options, log, afterTurn);
  const results = options.strategies.map((strategy, index) => toResult(strategy, turnsByStrategy[index] ?? []));
  const loadAverageAtEnd = loadavg()[0] ?? 0;
  const othersCpuShare = contention.othersShare();
  const ours = results.find((result) => result.strategy === 'ours');
  const baselines = results.filter((result) => result.strategy !== 'ours');
  const ratios = ours ? baselineRatios(ours, baselines) : [];
  const { floor, floorNote } = floorOutcome(options, ours, sampler);

  return {
    tool: 'llama-dialog bench',
    schemaVersion: 1,
    startedAt,
    order: options.order ?? 'interleaved',
    workload: {
      name: options.workload.name,
      version: options.workload.version,
      fingerprint: options.workload.fingerprint,
      turns: options.workload.playerLines.length,
      contextSize: options.workload.contextSize,
      maxTokens: options.workload.maxTokens,
      trimTarget: options.workload.trimTarget,
      summarize: options.workload.summarize !== null,
    },
    environment: { ...options.environment, loadAverageAtEnd, othersCpuShare },
    strategies: results,
    ratios,
    floor,
    floorNote,
    goals: ours ? checkGoals(ours, ratios, floor) : [],
    notes: [...(options.notes ?? [])],
  };
}

/** Runs after every turn of every strategy, before the next turn starts (and outside its timing). */
type AfterTurn = (strategy: BenchStrategy, turn: TurnMetrics) => Promise<void>;

function floorSampler(options: BenchmarkRunOptions): PairedFloorSampler | null {
  if (options.llamaBench === null || options.floorSamples === 0) return null;
  return new PairedFloorSampler({
    binary: options.llamaBench,
    modelPath: options.modelPath,
    threads: options.workload.threads,
    turns: options.workload.playerLines.length,
    samples: options.floorSamples,
  });
}

function floorOutcome(options: BenchmarkRunOptions, ours: StrategyResult | undefined, sampler: PairedFloorSampler | null): FloorOutcome {
  if (!ours) return { floor: null, floorNote: 'no llama-bench floor: the run did not include ours' };
  if (options.floorSamples === 0) return { floor: null, floorNote: 'no llama-bench floor: --floor-samples 0' };
  if (sampler === null) {
    return {
      floor: null,
      floorNote:
        'no llama-bench floor: llama-bench not found (build it with `LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-bench`: about 40 more files of llama.cpp, 1.5–3 min on 2 cores; or set LLAMA_BENCH=/path/to/llama-bench)',
    };
  }
  return sampler.outcome(ours.turns);
}

async function runSequential(options: BenchmarkRunOptions, log: (line: string) => void, afterTurn: AfterTurn): Promise<TurnMetrics[][]> {
  const lines = options.workload.playerLines;
  const all: TurnMetrics[][] = [];
  for (const strategy of options.strategies) {
    log(`[bench] ${strategy.name}: preparing (${strategy.description})`);
    const bar = progressBar(options, lines.length, strategy.name);
    const turns: TurnMetrics[] = [];
    try {
      await strategy.prepare();
      for (const [index, line] of lines.entries()) {
        const turn = await strategy.runTurn(line, index + 1);
        turns.push(turn);
        await afterTurn(strategy, turn);
        bar?.update(index + 1, `last turn ${turn.wallMs.toFixed(0)} ms, ${turn.evaluatedTokens} tokens evaluated`);
      }
    } finally {
      bar?.finish();
      await strategy.dispose();
    }
    all.push(turns);
  }
  return all;
}

async function runInterleaved(options: BenchmarkRunOptions, log: (line: string) => void, afterTurn: AfterTurn): Promise<TurnMetrics[][]> {
  const { strategies } = options;
  const lines = options.workload.playerLines;
  const all: TurnMetrics[][] = strategies.map(() => []);
  try {
    for (const strategy of strategies) {
      log(`[bench] ${strategy.name}: preparing (${strategy.description})`);
      await strategy.prepare();
    }
    log(`[bench] running ${lines.length} turns, each by ${strategies.map((strategy) => strategy.name).join(', ')} in rotating order`);
    const bar = progressBar(options, lines.length, 'turns');
    try {
      for (const [index, line] of lines.entries()) {
        const times: string[] = [];
        for (let offset = 0; offset < strategies.length; offset++) {
          const slot = (index + offset) % strategies.length;
          const strategy = strategies[slot] as BenchStrategy;
          const turn = await strategy.runTurn(line, index + 1);
          all[slot]?.push(turn);
          await afterTurn(strategy, turn);
          times[slot] = `${strategy.name} ${turn.wallMs.toFixed(0)}`;
        }
        bar?.update(index + 1, `last turn ms: ${times.join(', ')}`);
      }
    } finally {
      bar?.finish();
    }
  } finally {
    for (const strategy of strategies) await strategy.dispose();
  }
  return all;
}

function progressBar(options: BenchmarkRunOptions, total: number, label: string): ProgressBar | null {
  const stream = options.progress === undefined ? process.stderr : options.progress;
  return stream === null ? null : new ProgressBar({ total, label: label.padEnd(14), stream });
}

function toResult(strategy: BenchStrategy, turns: readonly TurnMetrics[]): StrategyResult {
  const withIdeal = withIdealEvaluation(turns, strategy.promptLayoutKnown);
  return {
    strategy: strategy.name,
    description: strategy.description,
    turns: withIdeal,
    summary: summarizeTurns(withIdeal),
    notes: [...strategy.notes],
  };
}
