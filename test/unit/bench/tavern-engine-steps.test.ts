import { describe, expect, it } from 'vitest';
import type { GenerateStepProfile } from '../../../src/engine/types.js';
import { renderEngineSteps, summarizeEngineSteps, uniqueEngineSteps } from '../../../src/bench/tavern-engine-steps.js';

function step(overrides: Partial<GenerateStepProfile>): GenerateStepProfile {
  return { step: 1, startedAt: 0, decodeMs: 10, batchTokens: 1, sequences: 1, generating: 1, cellsUsed: 100, nKv: 256, sampleMs: 0.1, graphReused: 0, ...overrides };
}

describe('engine steps of a tavern scene', () => {
  it('counts a step shared by several generations once, and keeps equal numbers of two engines apart', () => {
    const shared = step({ step: 7, startedAt: 1000, sequences: 3, generating: 3, batchTokens: 3 });
    const otherEngine = step({ step: 7, startedAt: 2000 });
    const unique = uniqueEngineSteps([shared, { ...shared }, { ...shared }, otherEngine, step({ step: 6, startedAt: 500 })]);
    expect(unique.map((s) => [s.step, s.startedAt])).toEqual([
      [6, 500],
      [7, 1000],
      [7, 2000],
    ]);
  });

  it('sorts steps by width, generation-only apart from those that carried prompt tokens, and relates busy time to the wall', () => {
    const steps = [
      step({ step: 1, startedAt: 0, sequences: 1, generating: 0, batchTokens: 512, decodeMs: 600 }),
      step({ step: 2, startedAt: 600, sequences: 2, generating: 1, batchTokens: 40, decodeMs: 120 }),
      step({ step: 3, startedAt: 720, sequences: 2, generating: 2, batchTokens: 2, decodeMs: 30 }),
      step({ step: 3, startedAt: 720, sequences: 2, generating: 2, batchTokens: 2, decodeMs: 30 }),
      step({ step: 4, startedAt: 750, sequences: 2, generating: 2, batchTokens: 2, decodeMs: 34 }),
      step({ step: 5, startedAt: 784, sequences: 1, batchTokens: 1, decodeMs: 16 }),
    ];
    const summary = summarizeEngineSteps(steps, 1600)!;
    expect(summary.steps).toBe(5);
    expect(summary.busyMs).toBe(800);
    expect(summary.busyShare).toBeCloseTo(0.5, 9);
    // generation steps: widths 2, 2, 1
    expect(summary.meanGenerationWidth).toBeCloseTo(5 / 3, 9);
    expect(summary.byWidth).toEqual([
      { sequences: 2, generationSteps: 2, generationMedianMs: 32, promptSteps: 1, promptMedianMs: 120, promptTokens: 39, totalMs: 184 },
      { sequences: 1, generationSteps: 1, generationMedianMs: 16, promptSteps: 1, promptMedianMs: 600, promptTokens: 512, totalMs: 616 },
    ]);
    const text = renderEngineSteps([{ strategy: 'batched', engine: summary }]).join('\n');
    expect(text).toContain('Engine steps of batched (--profile): 5 llama_decode calls, busy 0.80 s = 50 % of the wall time');
    expect(text.split('\n').find((line) => line.trim().startsWith('2 '))?.trim().split(/\s+/)).toEqual(['2', '2', '32.0', '1', '120.0', '39', '0.18']);
  });

  it('is null when nothing was profiled', () => {
    expect(summarizeEngineSteps([], 1000)).toBeNull();
  });
});
