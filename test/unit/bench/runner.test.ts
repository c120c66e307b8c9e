import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchEnvironment, StrategyName, TurnMetrics } from '../../../src/bench/bench-result.js';
import type { BenchStrategy } from '../../../src/bench/bench-strategy.js';
import { renderReportText } from '../../../src/bench/bench-report-output.js';
import { runBenchmark, type BenchmarkRunOptions } from '../../../src/bench/benchmark-runner.js';
import { buildWorkload } from '../../../src/bench/workloads.js';
import { singleNodeTurn } from './fixtures.js';
import { writeFakeLlamaBench } from './fake-llama-bench.js';

/** A strategy that answers instantly with fixed figures and records the order of calls. */
class ScriptedStrategy implements BenchStrategy {
  readonly description: string;
  readonly promptLayoutKnown: boolean;
  readonly notes: string[] = [];
  disposed = false;

  constructor(
    readonly name: StrategyName,
    private readonly evaluatedPerTurn: number,
    private readonly calls: string[],
  ) {
    this.description = `scripted ${name}`;
    this.promptLayoutKnown = name !== 'node-llama-cpp';
  }

  async prepare(): Promise<void> {
    this.calls.push(`${this.name}:prepare`);
  }

  async runTurn(line: string, turn: number): Promise<TurnMetrics> {
    this.calls.push(`${this.name}:${turn}`);
    const promptTokens = 250 + turn * 60;
    const evaluatedTokens = turn === 1 ? promptTokens : this.evaluatedPerTurn;
    return singleNodeTurn({
      turn,
      promptTokens,
      evaluatedTokens,
      wallMs: evaluatedTokens,
      firstTokenMs: evaluatedTokens / 2,
      engineMs: evaluatedTokens - 1,
      reply: line.slice(0, 4),
    });
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    this.calls.push(`${this.name}:dispose`);
  }
}

const environment: BenchEnvironment = {
  backend: 'cpu',
  device: 'test',
  threads: 2,
  contextSize: 2048,
  model: { path: 'm.gguf', architecture: 'llama', parameterCount: 1, fileSize: 1, synthetic: true },
  node: 'v20',
  platform: 'linux-x64',
  cpuCount: 2,
  loadAverageAtStart: 0,
};

/** runBenchmark over scripted strategies: no llama-bench, progress bar or log unless `options` bring them. */
function runScripted(turns: number, strategies: BenchStrategy[], options: Partial<BenchmarkRunOptions> = {}) {
  return runBenchmark({
    workload: buildWorkload('default', { turns }),
    modelPath: 'm.gguf',
    environment,
    strategies,
    llamaBench: null,
    progress: null,
    log: () => {},
    ...options,
  });
}

describe('runBenchmark', () => {
  it('interleaves turns across strategies in rotating order, after preparing all of them', async () => {
    const calls: string[] = [];
    const strategies = [new ScriptedStrategy('ours', 40, calls), new ScriptedStrategy('naive', 300, calls)];
    const report = await runScripted(3, strategies);
    expect(calls).toEqual([
      'ours:prepare',
      'naive:prepare',
      'ours:1',
      'naive:1',
      'naive:2',
      'ours:2',
      'ours:3',
      'naive:3',
      'ours:dispose',
      'naive:dispose',
    ]);
    expect(report.order).toBe('interleaved');
    expect(report.strategies.map((result) => result.turns.map((turn) => turn.turn))).toEqual([
      [1, 2, 3],
      [1, 2, 3],
    ]);
    expect(report.strategies[0]?.summary.totalEvaluatedTokens).toBe(310 + 40 + 40);
    expect(report.ratios).toEqual([expect.objectContaining({ baseline: 'naive' })]);
    expect(report.ratios[0]?.evaluatedTokens).toBeCloseTo(390 / 910, 10);
    expect(report.floor).toBeNull();
    expect(report.floorNote).toMatch(/llama-bench not found/);
    expect(typeof report.environment.loadAverageAtEnd).toBe('number');
  });

  it('runs one strategy after the other in sequential order, disposing each before the next', async () => {
    const calls: string[] = [];
    const strategies = [new ScriptedStrategy('ours', 40, calls), new ScriptedStrategy('node-llama-cpp', 90, calls)];
    const report = await runScripted(2, strategies, { order: 'sequential' });
    expect(calls).toEqual([
      'ours:prepare',
      'ours:1',
      'ours:2',
      'ours:dispose',
      'node-llama-cpp:prepare',
      'node-llama-cpp:1',
      'node-llama-cpp:2',
      'node-llama-cpp:dispose',
    ]);
    expect(report.strategies[1]?.summary.evaluatedOverIdeal).toBeNull();
    expect(report.goals.find((goal) => goal.goal.startsWith('evaluated tokens vs node'))?.value).toBeCloseTo(350 / 400, 10);
  });

  it('disposes every strategy when one fails mid-run', async () => {
    const calls: string[] = [];
    const failing = new ScriptedStrategy('naive', 300, calls);
    failing.runTurn = async () => {
      throw new Error('decode failed');
    };
    const ours = new ScriptedStrategy('ours', 40, calls);
    await expect(
      runScripted(2, [ours, failing]),
    ).rejects.toThrow('decode failed');
    expect(ours.disposed && failing.disposed).toBe(true);
  });

  it('pairs some of ours normal turns with a llama-bench run of the same shape, right after each', async () => {
    // A stand-in llama-bench: logs its arguments, then prints one sample of 100 ms as llama-bench -o json would.
    const { binary, folder } = writeFakeLlamaBench(
      `echo "$*" >> "$(dirname "$0")/args.log"\necho '[{"avg_ns": 100000000, "samples_ns": [100000000]}]'`,
    );
    const argsLog = join(folder, 'args.log');
    const calls: string[] = [];
    const strategies = [new ScriptedStrategy('ours', 40, calls), new ScriptedStrategy('naive', 300, calls)];
    const report = await runScripted(12, strategies, { order: 'sequential', llamaBench: binary, floorSamples: 3 });
    // 12 turns, 3 samples: one every 4 turns, from turn 2 on; naive's turns get none.
    expect(report.floor?.pairs.map((pair) => pair.turn)).toEqual([2, 6, 10]);
    const invocations = readFileSync(argsLog, 'utf8').trim().split('\n');
    expect(invocations).toHaveLength(3);
    // The twin of turn 2 has turn 2's shape: 40 new tokens, 32 generated, on the 250 + 2·60 − 40 tokens it reused.
    expect(invocations[0]).toContain('-pg 40,32 -d 330');
    expect(invocations[0]).toContain('-r 1');
    // Ours' normal turns took 40 ms each, llama-bench 100 ms: every pair's ratio is 0.4.
    expect(report.floor).toMatchObject({ floorMs: 100, lowestPairedRatio: 0.4, highestPairedRatio: 0.4, normalTurns: 11 });
    // Every sample took 100 ms whatever the depth: a flat floor line, and every normal turn (40 ms) is 0.4 of it.
    expect(report.floor?.floorLine).toEqual({ interceptMs: 100, msPerDepthToken: 0 });
    expect(report.floor?.ratio).toBeCloseTo(0.4, 10);
    expect(report.floor?.pairedRatio).toBeCloseTo(0.4, 10);
    expect(report.goals.find((goal) => goal.goal.includes('llama-bench'))).toMatchObject({ met: true });
    expect(renderReportText(report)).toContain('÷ the floor at their depth: 0.40× (median); the 3 pairs alone: 0.40× (0.40–0.40)');
  });

  it('says why there is no floor when llama-bench fails, and skips it when asked', async () => {
    const { binary } = writeFakeLlamaBench(`echo 'error: unknown argument' >&2\nexit 1`);
    const run = (floorSamples?: number) =>
      runScripted(4, [new ScriptedStrategy('ours', 40, [])], { order: 'sequential', llamaBench: binary, floorSamples });
    const failed = await run();
    expect(failed.floor).toBeNull();
    expect(failed.floorNote).toMatch(/llama-bench exited with 1: error: unknown argument/);
    const skipped = await run(0);
    expect(skipped.floorNote).toMatch(/--floor-samples 0/);
  });
});
