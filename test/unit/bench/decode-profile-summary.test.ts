import { describe, expect, it } from 'vitest';
import type { TurnMetrics } from '../../../src/bench/bench-result.js';
import { defaultTurnBlocks, renderDecodeProfileSummary, summarizeDecodeProfile } from '../../../src/bench/decode-profile-summary.js';
import type { GenerateStepProfile } from '../../../src/engine/types.js';

function step(overrides: Partial<GenerateStepProfile>): GenerateStepProfile {
  return { step: 1, startedAt: 0, decodeMs: 10, batchTokens: 1, sequences: 1, generating: 1, cellsUsed: 300, nKv: 512, sampleMs: 0.1, graphReused: 1, ...overrides };
}

function turn(index: number, promptTokens: number, steps: GenerateStepProfile[], trims = 0): TurnMetrics {
  return {
    turn: index,
    wallMs: 100 + index,
    promptTokens,
    trims,
    summaryWrites: 0,
    generatedTokens: steps.length,
    nodes: [{ decodeSteps: steps }],
  } as unknown as TurnMetrics;
}

describe('decode profile summary', () => {
  it('blocks skip the warm-up and cover the rest of the run in four spans', () => {
    expect(defaultTurnBlocks(200)).toEqual([
      { from: 20, to: 64 },
      { from: 65, to: 110 },
      { from: 111, to: 155 },
      { from: 156, to: 200 },
    ]);
    expect(defaultTurnBlocks(10)).toEqual([{ from: 1, to: 10 }]);
  });

  it('compares blocks at the most common n_kv and at one prompt-depth band; prompt steps are not generation steps', () => {
    const turns = [
      // Block 1: fast steps at n_kv 512, one slow one at 768 that must not enter the reference median.
      turn(1, 1000, [step({ batchTokens: 400, decodeMs: 90, graphReused: 0 }), step({ decodeMs: 10 }), step({ decodeMs: 12 }), step({ nKv: 768, decodeMs: 50 })]),
      turn(2, 1010, [step({ decodeMs: 11 }), step({ decodeMs: 11 })]),
      // Block 2: slower at the same n_kv; one trimmed turn (excluded from the turn-time figure) and one too deep.
      turn(3, 1000, [step({ decodeMs: 20 }), step({ decodeMs: 22 })]),
      turn(4, 1005, [step({ decodeMs: 21 }), step({ decodeMs: 21 })], 1),
      turn(5, 5000, [step({ decodeMs: 21, nKv: 768 }), step({ decodeMs: 21, nKv: 768 })]),
    ];
    const summary = summarizeDecodeProfile(turns, [
      { from: 1, to: 2 },
      { from: 3, to: 5 },
    ]);
    expect(summary.referenceNKv).toBe(512);
    expect(summary.depthBand).toEqual([755, 1255]);
    const [first, second] = summary.blocks;
    expect(first).toMatchObject({ generationSteps: 5, decodeMsAtReferenceNKv: 11, nKvMax: 768, normalTurnsAtDepth: 2 });
    // 5 steps of 6 reused their graph (the prompt batch rebuilt it).
    expect(first!.graphReuseShare).toBeCloseTo(5 / 6);
    expect(first!.normalTurnMsAtDepth).toBe(101.5);
    expect(second).toMatchObject({ generationSteps: 6, decodeMsAtReferenceNKv: 21, normalTurnsAtDepth: 1, normalTurnMsAtDepth: 103 });
    const text = renderDecodeProfileSummary(summary);
    expect(text).toContain('decode ms @n_kv 512');
    expect(text.split('\n')).toHaveLength(5);
  });

  it('a run without profiles gives empty figures, not errors', () => {
    const summary = summarizeDecodeProfile([turn(1, 100, [])]);
    expect(summary.referenceNKv).toBeNull();
    expect(summary.blocks[0]).toMatchObject({ generationSteps: 0, decodeMs: null, graphReuseShare: null });
    expect(renderDecodeProfileSummary(summary)).toContain('—');
  });
});
