import { describe, expect, it } from 'vitest';
import { renderBenchComparison } from '../../../src/bench/bench-compare.js';
import type { BenchEnvironment } from '../../../src/bench/bench-result.js';
import type { IntentMethodResult } from '../../../src/bench/quality/intent-set-runner.js';
import type { MemoryRun } from '../../../src/bench/quality/memory-set-runner.js';
import {
  judgeQualityGoals,
  qualityFingerprint,
  qualityRows,
  renderQualityChart,
  renderQualityText,
  type QualityReport,
} from '../../../src/bench/quality/quality-report.js';
import type { ToolModeResult } from '../../../src/bench/quality/tool-set-runner.js';

const intent = (method: string, accuracy: number, reference = false): IntentMethodResult => ({
  method,
  reference,
  lines: 240,
  accuracy,
  macroF1: accuracy - 0.05,
  meanMs: 90,
  medianMs: 85,
  abstained: 0,
  topConfusions: ['rumors → greet × 9'],
});

const toolMode = (mode: string, schemaValidShare: number, rightShare: number, calls = 30): ToolModeResult => ({
  mode,
  constrained: mode !== 'no grammar',
  lines: 40,
  linesWithCalls: calls,
  calls,
  schemaValidShare,
  rightShare,
  rightToolShare: rightShare,
  rightNoToolShare: 0.5,
  meanMs: 400,
});

const memoryRun = (trimLevel: number, mode: MemoryRun['mode'], recalled: number): MemoryRun => ({
  trimLevel,
  mode,
  fillerTurns: 6 * trimLevel,
  trims: mode === 'trim only' ? trimLevel : 0,
  summaries: mode === 'trim only' ? 0 : trimLevel,
  recalled,
  facts: 6,
  perFact: { name: recalled > 0, debt: recalled > 1 },
});

function report(model: string, sets: QualityReport['sets']): QualityReport {
  const environment: BenchEnvironment = {
    backend: 'cpu',
    device: 'AMD EPYC',
    threads: 2,
    contextSize: 1024,
    model: { path: `/cache/${model}`, architecture: 'llama', parameterCount: 135e6, fileSize: 98e6, synthetic: false },
    node: 'v20',
    platform: 'linux-x64',
    cpuCount: 2,
    loadAverageAtStart: 0,
  };
  return {
    tool: 'llama-dialog bench',
    kind: 'quality',
    startedAt: '2026-12-02T08:00:00.000Z',
    workload: { name: 'quality', fingerprint: qualityFingerprint(sets) },
    environment,
    sets,
    goals: judgeQualityGoals(sets),
    strategies: qualityRows(sets),
    wallMs: 300_000,
  };
}

const fullSets = (best: number): QualityReport['sets'] => ({
  intents: { set: 'intents', version: 'intents-v1', intents: 8, lines: 240, methods: [intent('letters', 0.15, true), intent('label words + examples, calibrated', best)] },
  tools: {
    set: 'tools',
    version: 'tools-v1',
    tools: 3,
    lines: 40,
    modes: [toolMode('grammar, tool optional', 1, 0.25, 0), toolMode('grammar, tool required', 1, 0.3), toolMode('no grammar', 0.5, 0.2, 4), toolMode('intent router + grammar', 1, 0.75)],
  },
  memory: { set: 'memory', version: 'memory-v1', contextSize: 512, runs: [memoryRun(3, 'trim only', 1), memoryRun(3, 'rolling summary', 2)] },
});

describe('quality report', () => {
  it('judges each goal on the figures: the best method, every grammar call valid, the best mode, 2× recall', () => {
    const goals = judgeQualityGoals(fullSets(0.82));
    expect(goals.map((goal) => goal.met)).toEqual([true, true, true, true]);
    expect(goals[0]!.figure).toContain('reference 15.0 %');
    const missed = judgeQualityGoals(fullSets(0.79));
    expect(missed[0]!.met).toBe(false);
  });

  it('fails the schema goal on one invalid call under a grammar, and needs some call to have been made', () => {
    const sets = fullSets(0.9);
    sets.tools!.modes[1] = toolMode('grammar, tool required', 29 / 30, 0.3);
    expect(judgeQualityGoals(sets)[1]!.met).toBe(false);
    sets.tools!.modes = [toolMode('grammar, tool optional', 1, 0.25, 0)];
    expect(judgeQualityGoals(sets)[1]!.met).toBe(false);
  });

  it('does not call a recall of zero twice zero, and says "not run" for sets that did not run', () => {
    const sets: QualityReport['sets'] = { memory: { set: 'memory', version: 'memory-v1', contextSize: 512, runs: [memoryRun(3, 'trim only', 0), memoryRun(3, 'rolling summary', 0)] } };
    const goals = judgeQualityGoals(sets);
    expect(goals[3]!.met).toBe(false);
    expect(goals[0]).toMatchObject({ met: null, figure: 'not run' });
  });

  it('prints a table per set, the reference marked, and a bar per row in the chart', () => {
    const text = renderQualityText(report('SmolLM2.gguf', fullSets(0.82)));
    expect(text).toContain('letters (reference)');
    expect(text).toMatch(/intent router \+ grammar\s+30\s+100\.0 % of 30\s+75\.0 %/);
    expect(text).toContain('✓ intents: best method accuracy ≥ 0.80');
    const chart = renderQualityChart(report('SmolLM2.gguf', fullSets(0.82)));
    // 2 intent methods + 4 tool modes × 2 (the mode without calls has no schema bar) + 2 memory runs.
    expect(chart.match(/class="bar"/g)?.length).toBe(2 + 7 + 2);
  });

  it('bench compare puts two models side by side, only the figures each row has', () => {
    const files = [
      { path: 'smol.json', json: JSON.parse(JSON.stringify(report('SmolLM2.gguf', fullSets(0.6)))) },
      { path: 'gemma.json', json: JSON.parse(JSON.stringify(report('gemma.gguf', fullSets(0.3)))) },
    ];
    const text = renderBenchComparison(files);
    const header = text.split('\n').find((line) => line.startsWith('strategy'));
    expect(header?.split(/\s{2,}/)).toEqual(['strategy', 'metric', 'SmolLM2.gguf · AMD EPYC (cpu)', 'gemma.gguf · AMD EPYC (cpu)', '2 ÷ 1']);
    const accuracy = text.split('\n').find((line) => line.startsWith('intents: label words') && line.includes('accuracy'));
    expect(accuracy?.trim().split(/\s{2,}/).slice(-3)).toEqual(['60.0 %', '30.0 %', '0.50']);
    expect(text.split('\n').some((line) => line.startsWith('memory:') && line.includes('accuracy'))).toBe(false);
  });
});
