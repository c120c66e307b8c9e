import { loadavg } from 'node:os';
import type {
  BenchEnvironment,
  BenchReport,
  LlamaBenchFloor,
  StrategyResult,
  TurnMetrics,
} from './bench-result.js';
import type { BenchStrategy } from './bench-strategy.js';
import { CpuContentionMeter } from './cpu-contention-meter.js';
import { runLlamaBench } from './llama-bench-floor.js';
import { ProgressBar, type ProgressStream } from './progress-bar.js';
import { median } from './statistics.js';
import { baselineRatios, checkGoals, isNormalTurn, summarizeTurns, withIdealEvaluation } from './strategy-summary.js';
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
  /** Where progress bars go (default process.stderr); null for none. */
  progress?: ProgressStream | null;
  /** Status lines (default: to stderr). */
  log?: (line: string) => void;
  /** Run-level notes to carry into the report. */
  notes?: readonly string[];
}

/**
 * Runs every strategy over the workload's lines and builds the report: per-turn figures, summaries, ideal
 * evaluated tokens, ratios of ours against each baseline, the llama-bench floor and the goals.
 * Model loading and context creation are not timed; a turn is timed from sending the line to its end.
 */
export async function runBenchmark(options: BenchmarkRunOptions): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const startedAt = new Date().toISOString();
  const contention = new CpuContentionMeter();
  // The floor is measured right after ours' own turns where the order allows: a shared machine's speed drifts
  // over minutes, and a floor taken after every baseline has run would compare ours with another machine state.
  let floorOutcome: FloorOutcome | null = null;
  const turnsByStrategy =
    (options.order ?? 'interleaved') === 'interleaved'
      ? await runInterleaved(options, log)
      : await runSequential(options, log, async (strategy, turns) => {
          if (strategy.name === 'ours') floorOutcome = await measureFloorOrSayWhy(options, turns, log);
        });
  const results = options.strategies.map((strategy, index) => toResult(strategy, turnsByStrategy[index] ?? []));
  const loadAverageAtEnd = loadavg()[0] ?? 0;
  const othersCpuShare = contention.othersShare();
  const ours = results.find((result) => result.strategy === 'ours');
  const baselines = results.filter((result) => result.strategy !== 'ours');
  const ratios = ours ? baselineRatios(ours, baselines) : [];
  const { floor, floorNote }: FloorOutcome = ours
    ? (floorOutcome ?? (await measureFloorOrSayWhy(options, ours.turns, log)))
    : { floor: null, floorNote: 'no llama-bench floor: the run did not include ours' };

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

interface FloorOutcome {
  floor: LlamaBenchFloor | null;
  /** Why there is no floor; null when there is one. */
  floorNote: string | null;
}

async function measureFloorOrSayWhy(
  options: BenchmarkRunOptions,
  oursTurns: readonly TurnMetrics[],
  log: (line: string) => void,
): Promise<FloorOutcome> {
  if (options.llamaBench === null) {
    return {
      floor: null,
      floorNote:
        'no llama-bench floor: llama-bench not found (build it with `LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-bench`, or set LLAMA_BENCH=/path/to/llama-bench)',
    };
  }
  try {
    const floor = await measureFloor(options.llamaBench, options.modelPath, options.workload, oursTurns, log);
    return floor === null
      ? { floor: null, floorNote: 'no llama-bench floor: ours had no normal (untrimmed, unsummarized) turn' }
      : { floor, floorNote: null };
  } catch (error) {
    return { floor: null, floorNote: `no llama-bench floor: ${error instanceof Error ? error.message : String(error)}` };
  }
}

async function runSequential(
  options: BenchmarkRunOptions,
  log: (line: string) => void,
  afterStrategy: (strategy: BenchStrategy, turns: readonly TurnMetrics[]) => Promise<void>,
): Promise<TurnMetrics[][]> {
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
        bar?.update(index + 1, `last turn ${turn.wallMs.toFixed(0)} ms, ${turn.evaluatedTokens} tokens evaluated`);
      }
    } finally {
      bar?.finish();
      await strategy.dispose();
    }
    all.push(turns);
    await afterStrategy(strategy, turns);
  }
  return all;
}

async function runInterleaved(options: BenchmarkRunOptions, log: (line: string) => void): Promise<TurnMetrics[][]> {
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

/**
 * The floor of a normal turn: llama-bench decoding the median new-token count of ours' normal turns on a cache
 * as deep as their median reuse, then generating their median reply length.
 */
async function measureFloor(
  binary: string,
  modelPath: string,
  workload: Workload,
  turns: readonly TurnMetrics[],
  log: (line: string) => void,
): Promise<LlamaBenchFloor | null> {
  const normal = turns.filter(isNormalTurn);
  if (normal.length === 0) return null;
  const depth = Math.round(median(normal.map((turn) => turn.reusedTokens)));
  const promptTokens = Math.max(1, Math.round(median(normal.map((turn) => turn.evaluatedTokens))));
  const generatedTokens = Math.max(1, Math.round(median(normal.map((turn) => turn.generatedTokens))));
  // Ten repetitions give a median that one disturbed repetition does not move.
  const repetitions = 10;
  log(`[bench] llama-bench floor: -pg ${promptTokens},${generatedTokens} -d ${depth} -t ${workload.threads} -r ${repetitions}`);
  const timing = await runLlamaBench({
    binary,
    modelPath,
    depth,
    promptTokens,
    generatedTokens,
    threads: workload.threads,
    repetitions,
  });
  const oursMedianNormalTurnMs = median(normal.map((turn) => turn.wallMs));
  return {
    binary,
    depth,
    promptTokens,
    generatedTokens,
    repetitions,
    floorMs: timing.medianMs,
    fastestMs: timing.minMs,
    meanMs: timing.meanMs,
    oursMedianNormalTurnMs,
    ratio: oursMedianNormalTurnMs / timing.medianMs,
    ratioToFastest: oursMedianNormalTurnMs / timing.minMs,
  };
}
