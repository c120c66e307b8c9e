import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { BenchEnvironment, StrategyName, TurnMetrics } from '../../src/bench/bench-result.js';
import type { BenchStrategy } from '../../src/bench/bench-strategy.js';
import { runBenchmark } from '../../src/bench/benchmark-runner.js';
import { buildWorkload } from '../../src/bench/workloads.js';

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
    return {
      turn,
      wallMs: evaluatedTokens,
      firstTokenMs: evaluatedTokens / 2,
      answerMs: evaluatedTokens,
      engineMs: evaluatedTokens - 1,
      promptTokens,
      reusedTokens: promptTokens - evaluatedTokens,
      evaluatedTokens,
      generatedTokens: 32,
      trims: 0,
      summaryWrites: 0,
      idealEvaluatedTokens: null,
      nodes: [
        {
          node: 'reply',
          nodeType: 'Generate',
          promptTokens,
          reusedTokens: promptTokens - evaluatedTokens,
          evaluatedTokens,
          generatedTokens: 32,
          trimmedTurns: 0,
          summaryWritten: false,
          firstTokenMs: evaluatedTokens / 2,
          totalMs: evaluatedTokens,
          engineMs: evaluatedTokens - 1,
          rereadFrom: null,
          cacheMissCause: null,
        },
      ],
      reply: line.slice(0, 4),
    };
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

describe('runBenchmark', () => {
  it('interleaves turns across strategies in rotating order, after preparing all of them', async () => {
    const calls: string[] = [];
    const strategies = [new ScriptedStrategy('ours', 40, calls), new ScriptedStrategy('naive', 300, calls)];
    const report = await runBenchmark({
      workload: buildWorkload('default', { turns: 3 }),
      modelPath: 'm.gguf',
      environment,
      strategies,
      llamaBench: null,
      progress: null,
      log: () => {},
    });
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
    const report = await runBenchmark({
      workload: buildWorkload('default', { turns: 2 }),
      modelPath: 'm.gguf',
      environment,
      strategies: [new ScriptedStrategy('ours', 40, calls), new ScriptedStrategy('node-llama-cpp', 90, calls)],
      order: 'sequential',
      llamaBench: null,
      progress: null,
      log: () => {},
    });
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
      runBenchmark({
        workload: buildWorkload('default', { turns: 2 }),
        modelPath: 'm.gguf',
        environment,
        strategies: [ours, failing],
        llamaBench: null,
        progress: null,
        log: () => {},
      }),
    ).rejects.toThrow('decode failed');
    expect(ours.disposed && failing.disposed).toBe(true);
  });

  it('measures the llama-bench floor right after ours in sequential order, before any baseline runs', async () => {
    // A stand-in llama-bench: prints one test's samples (ms 100, 110, 400) as llama-bench -o json would.
    const folder = mkdtempSync(join(tmpdir(), 'fake-llama-bench-'));
    const binary = join(folder, 'llama-bench');
    writeFileSync(binary, `#!/bin/sh\necho '[{"avg_ns": 203333333, "samples_ns": [100000000, 110000000, 400000000]}]'\n`);
    chmodSync(binary, 0o755);
    const calls: string[] = [];
    const report = await runBenchmark({
      workload: buildWorkload('default', { turns: 3 }),
      modelPath: 'm.gguf',
      environment,
      strategies: [new ScriptedStrategy('ours', 40, calls), new ScriptedStrategy('naive', 300, calls)],
      order: 'sequential',
      llamaBench: binary,
      progress: null,
      log: (line) => {
        if (line.includes('llama-bench floor')) calls.push('floor');
      },
    });
    expect(calls.indexOf('floor')).toBe(calls.indexOf('ours:dispose') + 1);
    expect(calls.indexOf('floor')).toBeLessThan(calls.indexOf('naive:prepare'));
    // Median against median: ours' normal turns took 40 ms each, llama-bench's median sample 110 ms.
    expect(report.floor).toMatchObject({ floorMs: 110, fastestMs: 100 });
    expect(report.floor?.ratio).toBeCloseTo(40 / 110, 10);
    expect(report.floor?.ratioToFastest).toBeCloseTo(40 / 100, 10);
  });
});
