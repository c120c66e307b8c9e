import { describe, expect, it } from 'vitest';
import type { TurnMetrics } from '../../../src/bench/bench-result.js';
import { PairedFloorSampler } from '../../../src/bench/paired-floor-sampler.js';
import { singleNodeTurn } from './fixtures.js';
import { writeFakeLlamaBench } from './fake-llama-bench.js';

/**
 * A stand-in llama-bench whose one repetition takes 100 ms + 0.2 ms per token of depth (-d), as a real one grows
 * with the attention span; at depth 800 it reports 10× that, like a repetition disturbed by another process.
 */
function fakeLlamaBench(): string {
  return writeFakeLlamaBench(`depth=0
while [ $# -gt 0 ]; do
  if [ "$1" = "-d" ]; then depth=$2; fi
  shift
done
ns=$(( (100000 + depth * 200) * 1000 ))
if [ "$depth" = "800" ]; then ns=$(( ns * 10 )); fi
echo "[{\\"avg_ns\\": $ns, \\"samples_ns\\": [$ns]}]"`).binary;
}

/** Turn n reuses 100·n tokens, adds 30, generates 32; ours takes `factor` × the fake floor at that depth. */
function turn(n: number, factor: number): TurnMetrics {
  const depth = 100 * n;
  const wallMs = factor * (100 + 0.2 * depth);
  return singleNodeTurn({
    turn: n,
    promptTokens: depth + 30,
    evaluatedTokens: n === 1 ? depth + 30 : 30,
    wallMs,
    firstTokenMs: wallMs / 4,
    engineMs: wallMs - 1,
  });
}

describe('PairedFloorSampler', () => {
  it('fits the floor over depth and holds every normal turn against it', async () => {
    const sampler = new PairedFloorSampler({ binary: fakeLlamaBench(), modelPath: 'm.gguf', threads: 2, turns: 16, samples: 4 });
    const turns = Array.from({ length: 16 }, (_, index) => turn(index + 1, 1.1));
    for (const entry of turns) await sampler.afterTurn(entry);
    const { floor, floorNote } = sampler.outcome(turns);
    expect(floorNote).toBeNull();
    // 16 turns, 4 samples: every 4th turn from turn 2, each twin with its turn's shape.
    expect(floor?.pairs.map((pair) => pair.turn)).toEqual([2, 6, 10, 14]);
    expect(floor?.pairs.map((pair) => [pair.depth, pair.promptTokens, pair.generatedTokens])).toEqual([
      [200, 30, 32],
      [600, 30, 32],
      [1000, 30, 32],
      [1400, 30, 32],
    ]);
    expect(floor?.floorLine.interceptMs).toBeCloseTo(100, 6);
    expect(floor?.floorLine.msPerDepthToken).toBeCloseTo(0.2, 9);
    expect(floor?.normalTurns).toBe(15);
    expect(floor?.ratio).toBeCloseTo(1.1, 9);
  });

  it('keeps the line when one sample is disturbed', async () => {
    const sampler = new PairedFloorSampler({ binary: fakeLlamaBench(), modelPath: 'm.gguf', threads: 2, turns: 12, samples: 6 });
    const turns = Array.from({ length: 12 }, (_, index) => turn(index + 1, 0.9));
    for (const entry of turns) await sampler.afterTurn(entry);
    const { floor } = sampler.outcome(turns);
    // 12 turns, 6 samples: turns 2, 4, …, 12; the twin of turn 8 (depth 800) took ten times too long.
    expect(floor?.pairs.map((pair) => pair.depth)).toEqual([200, 400, 600, 800, 1000, 1200]);
    expect(floor?.floorLine.msPerDepthToken).toBeCloseTo(0.2, 9);
    expect(floor?.ratio).toBeCloseTo(0.9, 9);
    // The pair at depth 800 alone says 0.09: the pairs' median does not follow it either.
    expect(floor?.lowestPairedRatio).toBeCloseTo(0.09, 9);
    expect(floor?.pairedRatio).toBeCloseTo(0.9, 9);
  });

  it('skips trimmed turns and reports when there was no normal turn to pair', async () => {
    const sampler = new PairedFloorSampler({ binary: fakeLlamaBench(), modelPath: 'm.gguf', threads: 2, turns: 4, samples: 2 });
    const turns = [1, 2, 3, 4].map((n) => ({ ...turn(n, 1), trims: 1 }));
    for (const entry of turns) await sampler.afterTurn(entry);
    expect(sampler.outcome(turns)).toEqual({
      floor: null,
      floorNote: 'no llama-bench floor: ours had no normal (untrimmed, unsummarized) turn',
    });
  });
});
