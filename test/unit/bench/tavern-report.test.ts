import { describe, expect, it } from 'vitest';
import type { TavernLineRecord, TavernReport, TavernStrategyResult } from '../../../src/bench/tavern-result.js';
import {
  describeContention,
  renderTavernChart,
  renderTavernText,
  summarizeTavernLines,
  tavernRatios,
} from '../../../src/bench/tavern-report.js';

function line(agent: number, arrivalMs: number, ttftMs: number | null, turnMs: number, generatedTokens = 4, evaluatedTokens = 100): TavernLineRecord {
  return { agent, lineOfAgent: 0, scheduledMs: arrivalMs, arrivalMs, ttftMs, turnMs, generatedTokens, evaluatedTokens, reusedTokens: null };
}

// Five lines: ttft 10, 20, 30, 40, 100 (p50 30, p95 = 40 + 0.8 × 60 = 88); turns 50..250 (p50 150, p95 240);
// first arrival 1000, last completion 1400 + 250 = 1650: wall 650 ms; 5 × 4 = 20 tokens → 20 / 0.65 s.
const lines = [
  line(0, 1000, 10, 50),
  line(1, 1100, 20, 100),
  line(0, 1200, 30, 150),
  line(1, 1300, 40, 200),
  line(0, 1400, 100, 250),
];

function result(strategy: TavernStrategyResult['strategy'], scale: number, peakKvBytes: number | null): TavernStrategyResult {
  const scaled = lines.map((entry) => ({ ...entry, ttftMs: entry.ttftMs === null ? null : entry.ttftMs * scale, turnMs: entry.turnMs * scale }));
  return {
    strategy,
    description: strategy,
    settings: {},
    status: 'ok',
    error: null,
    lines: scaled,
    summary: summarizeTavernLines({ lines: scaled, peakKvBytes, peakKvBytesUsed: peakKvBytes === null ? null : peakKvBytes / 2, peakRssBytes: 2 ** 30, rssAtStartBytes: 2 ** 29 }),
    notes: [],
  };
}

describe('summarizeTavernLines', () => {
  it('takes percentiles of ttft and turn time from arrival, tokens per second over first arrival → last completion', () => {
    const summary = summarizeTavernLines({ lines, peakKvBytes: 4096, peakKvBytesUsed: 1024, peakRssBytes: 10, rssAtStartBytes: 5 });
    expect(summary).toMatchObject({
      lines: 5,
      ttftP50Ms: 30,
      turnP50Ms: 150,
      wallMs: 650,
      generatedTokens: 20,
      evaluatedTokens: 500,
      peakKvBytes: 4096,
      peakKvBytesUsed: 1024,
      peakRssBytes: 10,
      rssAtStartBytes: 5,
    });
    expect(summary.ttftP95Ms).toBeCloseTo(88, 9);
    expect(summary.turnP95Ms).toBeCloseTo(240, 9);
    expect(summary.tokensPerSecond).toBeCloseTo(20 / 0.65, 9);
  });

  it('leaves lines without a first token out of the ttft percentiles, and gives null when none had one', () => {
    const withEmpty = [...lines, line(1, 1500, null, 10)];
    expect(summarizeTavernLines({ lines: withEmpty, peakKvBytes: null, peakKvBytesUsed: null, peakRssBytes: 1, rssAtStartBytes: 1 }).ttftP50Ms).toBe(30);
    const none = summarizeTavernLines({ lines: [line(0, 0, null, 10)], peakKvBytes: null, peakKvBytesUsed: null, peakRssBytes: 1, rssAtStartBytes: 1 });
    expect(none.ttftP50Ms).toBeNull();
    expect(none.ttftP95Ms).toBeNull();
  });
});

describe('tavernRatios', () => {
  it('holds every finished strategy against fifo and against node-llama-cpp; unknown figures give null', () => {
    const results = [
      result('fifo', 1, 1000),
      result('batched', 0.5, 250),
      { ...result('batched-no-spawn', 1, 1), status: 'failed' as const, summary: null, lines: [] },
      result('node-llama-cpp', 2, null),
    ];
    const ratios = tavernRatios(results);
    expect(ratios.map((entry) => `${entry.strategy}÷${entry.reference}`)).toEqual([
      'batched÷fifo',
      'node-llama-cpp÷fifo',
      'fifo÷node-llama-cpp',
      'batched÷node-llama-cpp',
    ]);
    const batchedFifo = ratios[0]!;
    expect(batchedFifo.ttftP50).toBeCloseTo(0.5, 9);
    expect(batchedFifo.turnP95).toBeCloseTo(0.5, 9);
    expect(batchedFifo.peakKvBytes).toBeCloseTo(0.25, 9);
    expect(batchedFifo.peakKvBytesUsed).toBeCloseTo(0.25, 9);
    expect(batchedFifo.evaluatedTokens).toBe(1);
    expect(batchedFifo.peakRssBytes).toBe(1);
    // Halving every turn time shortens the wall only by the last turn's change: 650 → 525 ms.
    expect(batchedFifo.tokensPerSecond).toBeCloseTo(650 / 525, 9);
    expect(ratios[3]!.ttftP50).toBeCloseTo(0.25, 9);
    expect(ratios[3]!.peakKvBytes).toBeNull();
  });
});

describe('tavern text and chart', () => {
  const report: TavernReport = {
    tool: 'llama-dialog bench',
    kind: 'tavern',
    schemaVersion: 1,
    startedAt: '2026-12-01T00:00:00.000Z',
    workload: {
      name: 'tavern',
      version: 'tavern-v1',
      fingerprint: '0123456789abcdef',
      agents: 2,
      linesPerAgent: 3,
      arrivals: 'poisson',
      meanGapMs: 500,
      seed: 1,
      loreTokens: 612,
      contextSize: 2048,
      maxTokens: 4,
      threads: 2,
      sampling: 'greedy',
    },
    machine: { backend: 'cuda', device: 'NVIDIA H200', vramBytes: 141 * 2 ** 30, gpuLayers: 99, cpu: 'Xeon', cpuCount: 16, platform: 'linux-x64', node: 'v20', llamaCpp: '' },
    model: { path: '/models/small.gguf', architecture: 'llama', parameterCount: 1, fileSize: 2 ** 20, synthetic: true },
    strategies: [result('fifo', 1, 2 ** 20), { ...result('batched', 1, 1), status: 'failed', error: 'no batched engine', summary: null, lines: [] }],
    ratios: [],
    notes: [],
  };

  it('prints the machine, one row per strategy with its figures, and the failure reason', () => {
    const text = renderTavernText(report);
    expect(text).toContain('device NVIDIA H200 (141.0 GiB) · gpuLayers 99');
    const fifoRow = text.split('\n').find((row) => row.startsWith('fifo'));
    expect(fifoRow?.split(/\s+/)).toEqual(['fifo', '5', '30', '88', '150', '240', '0.65', '20', '30.8', '500', '1.0', '0.5', '1024.0']);
    expect(text).toContain('FAILED batched: no batched engine');
  });

  it('says how much CPU other processes took during each strategy, and which figures that makes contended', () => {
    const [fifo, batched] = report.strategies as [TavernStrategyResult, TavernStrategyResult];
    expect(describeContention([{ ...fifo, othersCpuShare: 0.02 }, { ...batched, othersCpuShare: 0.31 }])).toBe(
      'CPU used by other processes while each strategy ran: fifo 2 %, batched 31 % — batched: figures taken under contention',
    );
    expect(describeContention([{ ...fifo, othersCpuShare: 0.02 }, { ...batched, othersCpuShare: null }])).toBe(
      'CPU used by other processes while each strategy ran: fifo 2 %',
    );
    expect(describeContention(report.strategies)).toBeNull();
    expect(renderTavernText({ ...report, strategies: [{ ...fifo, othersCpuShare: 0.5 }, batched] })).toContain('fifo 50 % — fifo: figures taken under contention');
  });

  it('says how lines arrived: the Poisson gap, or lockstep rounds', () => {
    expect(renderTavernText(report)).toContain('Poisson arrivals every 500 ms on average');
    const lockstep = renderTavernText({ ...report, workload: { ...report.workload, arrivals: 'lockstep' } });
    expect(lockstep).toContain('lockstep rounds');
    expect(lockstep).not.toContain('Poisson');
  });

  it('charts ttft and turn time against arrival time, one series per finished strategy', () => {
    const svg = renderTavernChart(report);
    expect(svg.match(/class="series" data-series="fifo"/g)).toHaveLength(2);
    expect(svg).not.toContain('data-series="batched"');
    expect(svg).toContain('arrival of the line (s after the scene starts)');
  });
});
