import type {
  BenchEnvironment,
  BenchReport,
  LlamaBenchFloor,
  StrategyResult,
  TurnMetrics,
} from './bench-result.js';
import type { BenchStrategy } from './bench-strategy.js';
import { runLlamaBench } from './llama-bench-floor.js';
import { ProgressBar, type ProgressStream } from './progress-bar.js';
import { median } from './statistics.js';
import { baselineRatios, checkGoals, isNormalTurn, summarizeTurns, withIdealEvaluation } from './strategy-summary.js';
import type { Workload } from './workloads.js';

export interface BenchmarkRunOptions {
  workload: Workload;
  modelPath: string;
  environment: BenchEnvironment;
  /** `ours` first, then the baselines, run one after the other (never overlapping: they share the CPU). */
  strategies: readonly BenchStrategy[];
  /** llama-bench binary for the floor column; null skips it with a note. */
  llamaBench: string | null;
  /** Where progress bars go (default process.stderr); null for none. */
  progress?: ProgressStream | null;
  /** Status lines (default: to stderr). */
  log?: (line: string) => void;
}

/**
 * Runs every strategy over the workload's lines and builds the report: per-turn figures, summaries, ideal
 * evaluated tokens, ratios of ours against each baseline, the llama-bench floor and the goals.
 * Model loading and context creation are not timed; a turn is timed from sending the line to its end.
 */
export async function runBenchmark(options: BenchmarkRunOptions): Promise<BenchReport> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const startedAt = new Date().toISOString();
  const results: StrategyResult[] = [];
  for (const strategy of options.strategies) {
    results.push(await runStrategy(strategy, options, log));
  }
  const ours = results.find((result) => result.strategy === 'ours');
  const baselines = results.filter((result) => result.strategy !== 'ours');
  const ratios = ours ? baselineRatios(ours, baselines) : [];

  let floor: LlamaBenchFloor | null = null;
  let floorNote: string | null = null;
  if (!ours) floorNote = 'no llama-bench floor: the run did not include ours';
  else if (options.llamaBench === null) {
    floorNote =
      'no llama-bench floor: llama-bench not found (build it with `LLAMA_DIALOG_BUILD_BENCH=1 node scripts/build-native.mjs llama-bench`, or set LLAMA_BENCH=/path/to/llama-bench)';
  } else {
    try {
      floor = await measureFloor(options.llamaBench, options.modelPath, options.workload, ours.turns, log);
      if (floor === null) floorNote = 'no llama-bench floor: ours had no normal (untrimmed, unsummarized) turn';
    } catch (error) {
      floorNote = `no llama-bench floor: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  return {
    tool: 'llama-dialog bench',
    schemaVersion: 1,
    startedAt,
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
    environment: options.environment,
    strategies: results,
    ratios,
    floor,
    floorNote,
    goals: ours ? checkGoals(ours, ratios, floor) : [],
  };
}

async function runStrategy(
  strategy: BenchStrategy,
  options: BenchmarkRunOptions,
  log: (line: string) => void,
): Promise<StrategyResult> {
  const lines = options.workload.playerLines;
  log(`[bench] ${strategy.name}: preparing (${strategy.description})`);
  const stream = options.progress === undefined ? process.stderr : options.progress;
  const bar = stream === null ? null : new ProgressBar({ total: lines.length, label: strategy.name.padEnd(14), stream });
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
  const repetitions = 5;
  log(`[bench] llama-bench floor: -pg ${promptTokens},${generatedTokens} -d ${depth} -t ${workload.threads} -r ${repetitions}`);
  const floorMs = await runLlamaBench({
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
    floorMs,
    oursMedianNormalTurnMs,
    ratio: oursMedianNormalTurnMs / floorMs,
  };
}
