import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderReportChart, renderReportText } from '../../../src/bench/bench-report-output.js';
import type { BenchReport, StrategyName, StrategyResult, TurnMetrics } from '../../../src/bench/bench-result.js';
import { findLlamaBench, parseLlamaBenchJson } from '../../../src/bench/llama-bench-floor.js';
import { baselineRatios, checkGoals, summarizeTurns, withIdealEvaluation } from '../../../src/bench/strategy-summary.js';
import { singleNodeTurn } from './fixtures.js';

function turns(strategy: StrategyName, count: number, evaluated: (turn: number) => number, ms: (turn: number) => number): TurnMetrics[] {
  const peer = strategy === 'node-llama-cpp';
  return Array.from({ length: count }, (_, index) =>
    singleNodeTurn({
      turn: index + 1,
      promptTokens: 250 + (index + 1) * 60,
      evaluatedTokens: evaluated(index + 1),
      wallMs: ms(index + 1),
      firstTokenMs: ms(index + 1) / 3,
      engineMs: peer ? null : ms(index + 1) - 2,
      node: peer ? 'LlamaChatSession' : 'reply',
      reply: 'Aye.',
    }),
  );
}

function result(strategy: StrategyName, rows: TurnMetrics[], layoutKnown: boolean): StrategyResult {
  const withIdeal = withIdealEvaluation(rows, layoutKnown);
  return { strategy, description: strategy, turns: withIdeal, summary: summarizeTurns(withIdeal), notes: [] };
}

const ours = result('ours', turns('ours', 5, (turn) => (turn === 1 ? 310 : 60), () => 100), true);
const peer = result('node-llama-cpp', turns('node-llama-cpp', 5, (turn) => (turn === 1 ? 310 : 120), () => 250), false);
const ratios = baselineRatios(ours, [peer]);
const report: BenchReport = {
  tool: 'llama-dialog bench',
  schemaVersion: 1,
  startedAt: '2026-01-01T00:00:00.000Z',
  order: 'interleaved',
  workload: { name: 'default', version: 'blacksmith-v1', fingerprint: '0123456789abcdef', turns: 5, contextSize: 2048, maxTokens: 32, trimTarget: 0.75, summarize: false },
  environment: {
    backend: 'cpu',
    device: 'Test CPU',
    threads: 2,
    contextSize: 2048,
    model: { path: '/tmp/models/small.gguf', architecture: 'llama', parameterCount: 12_300_000, fileSize: 25 * 2 ** 20, synthetic: true },
    node: 'v20.0.0',
    platform: 'linux-x64',
    cpuCount: 2,
    loadAverageAtStart: 1.7,
  },
  strategies: [ours, peer],
  ratios,
  floor: null,
  floorNote: 'no llama-bench floor: llama-bench not found',
  goals: checkGoals(ours, ratios, null),
  notes: ['node-llama-cpp baseline skipped: not installed'],
};

describe('benchmark report', () => {
  it('computes ours ÷ baseline ratios and checks the goals', () => {
    expect(ratios[0]?.totalWall).toBeCloseTo(0.4, 10);
    expect(ratios[0]?.evaluatedTokens).toBeCloseTo((310 + 4 * 60) / (310 + 4 * 120), 10);
    const wallGoal = report.goals.find((goal) => goal.goal.startsWith('total wall'));
    expect(wallGoal).toMatchObject({ limit: 0.6, met: true });
    const floorGoal = report.goals.find((goal) => goal.goal.includes('llama-bench'));
    expect(floorGoal).toMatchObject({ value: null, met: null });
    const evaluatedGoal = report.goals.find((goal) => goal.goal.startsWith('evaluated tokens vs node'));
    expect(evaluatedGoal?.limit).toBe(0.7);
  });

  it('prints the setup, per-turn rows, the summary, ratios, goals and the missing-floor note', () => {
    const text = renderReportText(report);
    expect(text).toContain('backend cpu · device Test CPU · threads 2 · context 2048');
    expect(text).toContain('model small.gguf (synthetic) · llama · 12.3 M parameters');
    expect(text).toContain('interleaved run · load average 1.70 at start on 2 CPUs — figures taken under contention');
    expect(text).toContain('fingerprint 0123456789abcdef');
    const summary = text.slice(text.indexOf('Summary'));
    expect(summary).toMatch(/\nours\s+5\s+0\.50\s+100\s+100/);
    expect(summary).toMatch(/\nnode-llama-cpp\s+5\s+1\.25/);
    expect(text).toContain('Note: no llama-bench floor: llama-bench not found');
    expect(text).toContain('Note: node-llama-cpp baseline skipped: not installed');
    expect(text).toMatch(/total wall time vs node-llama-cpp\s+0\.40×\s+≤ 0\.6×\s+yes/);
    const perTurn = text.slice(text.indexOf('Per turn'), text.indexOf('Summary')).trim().split('\n');
    expect(perTurn).toHaveLength(3 + 5);
  });

  it('judges contention by the CPU share other processes used, when it is known', () => {
    const quiet = { ...report, environment: { ...report.environment, loadAverageAtEnd: 3.9, othersCpuShare: 0.03 } };
    expect(renderReportText(quiet)).toContain('at end on 2 CPUs · other processes used 3 % of the CPUs\n');
    const busy = { ...report, environment: { ...report.environment, loadAverageAtStart: 0, othersCpuShare: 0.4 } };
    expect(renderReportText(busy)).toContain('other processes used 40 % of the CPUs — figures taken under contention');
  });

  it('leaves the per-turn table out on request', () => {
    expect(renderReportText(report, { perTurn: false })).not.toContain('Per turn');
  });

  it('charts latency and evaluated tokens with one line per strategy', () => {
    const svg = renderReportChart(report);
    expect(svg.split('<g class="panel"')).toHaveLength(3);
    expect(svg.match(/class="series"/g)).toHaveLength(4);
    expect(svg).toContain('data-series="node-llama-cpp"');
  });
});

describe('llama-bench floor helpers', () => {
  it('reads the mean time of llama-bench -o json in milliseconds', () => {
    expect(parseLlamaBenchJson(JSON.stringify([{ n_prompt: 60, n_gen: 32, n_depth: 900, avg_ns: 123_456_789 }]))).toEqual({
      meanMs: 123.456789,
    });
    expect(parseLlamaBenchJson(JSON.stringify([{ avg_ns: 150e6, samples_ns: [200e6, 100e6, 150e6] }]))).toEqual({ meanMs: 150 });
    expect(() => parseLlamaBenchJson('build: ok')).toThrow(/no JSON/);
    expect(() => parseLlamaBenchJson('[{}]')).toThrow(/avg_ns/);
  });

  it('finds llama-bench under build/ or from $LLAMA_BENCH, and says null when absent', () => {
    const root = mkdtempSync(join(tmpdir(), 'llama-bench-find-'));
    expect(findLlamaBench({}, root)).toBeNull();
    mkdirSync(join(root, 'build', 'llama-bench', 'bin'), { recursive: true });
    const binary = join(root, 'build', 'llama-bench', 'bin', 'llama-bench');
    writeFileSync(binary, '#!/bin/sh\n');
    chmodSync(binary, 0o755);
    expect(findLlamaBench({}, root)).toBe(binary);
    expect(findLlamaBench({ LLAMA_BENCH: join(root, 'missing') }, root)).toBeNull();
    expect(findLlamaBench({ LLAMA_BENCH: binary }, '/nonexistent')).toBe(binary);
  });
});

describe('backendFromSystemInfo', () => {
  it('names the GPU backend a build reports, else cpu', async () => {
    const { backendFromSystemInfo } = await import('../../../src/bench/bench-environment.js');
    expect(backendFromSystemInfo('CPU : SSE3 = 1 | AVX2 = 1 | OPENMP = 1 | REPACK = 1 |')).toBe('cpu');
    expect(backendFromSystemInfo('CUDA : ARCHS = 890 | USE_GRAPHS = 1 | CPU : AVX2 = 1 |')).toBe('cuda');
    expect(backendFromSystemInfo('Vulkan : ... | CPU : NEON = 1 |')).toBe('vulkan');
    expect(backendFromSystemInfo('MTL : EMBED_LIBRARY = 1 | CPU : NEON = 1 |')).toBe('metal');
    expect(backendFromSystemInfo(null)).toBe('cpu');
  });
});
