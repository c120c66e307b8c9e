import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../../src/synthetic/synthetic-random.js';
import { fromFloat16Bits, normalFloat16Table, randomFloat16Chunks, toFloat16Bits } from '../../../src/synthetic/synthetic-weights.js';

describe('float16 conversion', () => {
  it('encodes known values', () => {
    expect(toFloat16Bits(0)).toBe(0x0000);
    expect(toFloat16Bits(-0)).toBe(0x8000);
    expect(toFloat16Bits(1)).toBe(0x3c00);
    expect(toFloat16Bits(-2)).toBe(0xc000);
    expect(toFloat16Bits(0.1)).toBe(0x2e66);
    expect(toFloat16Bits(65504)).toBe(0x7bff);
    expect(toFloat16Bits(2 ** -24)).toBe(0x0001); // smallest subnormal
    expect(toFloat16Bits(2 ** -14)).toBe(0x0400); // smallest normal
    expect(toFloat16Bits(Infinity)).toBe(0x7c00);
    expect(toFloat16Bits(-1e9)).toBe(0xfc00);
    expect(Number.isNaN(fromFloat16Bits(toFloat16Bits(NaN)))).toBe(true);
  });

  it('rounds to nearest, ties to even, including into the next exponent and to infinity', () => {
    expect(toFloat16Bits(1 + 2 ** -11)).toBe(0x3c00); // tie, even stays
    expect(toFloat16Bits(1 + 3 * 2 ** -11)).toBe(0x3c02); // tie, odd rounds up
    expect(toFloat16Bits(1 + 2 ** -11 + 2 ** -20)).toBe(0x3c01); // above the tie
    expect(toFloat16Bits(2 - 2 ** -12)).toBe(0x4000); // mantissa carry into the exponent
    expect(toFloat16Bits(65520)).toBe(0x7c00); // tie between 65504 and 65536: even is infinity
    expect(toFloat16Bits(2 ** -25)).toBe(0x0000); // tie between 0 and the smallest subnormal
    expect(toFloat16Bits(3 * 2 ** -25)).toBe(0x0002);
  });

  it('round-trips every finite float16 bit pattern', () => {
    const mismatches: number[] = [];
    for (let bits = 0; bits < 0x10000; bits++) {
      const value = fromFloat16Bits(bits);
      if (Number.isNaN(value)) continue;
      if (toFloat16Bits(value) !== bits) mismatches.push(bits);
    }
    expect(mismatches).toEqual([]);
  });
});

describe('SeededRandom', () => {
  const draw = (random: SeededRandom, n: number): number[] => Array.from({ length: n }, () => random.nextUint32());

  it('is a pure function of (seed, stream)', () => {
    expect(draw(new SeededRandom(42, 3), 20)).toEqual(draw(new SeededRandom(42, 3), 20));
    expect(draw(new SeededRandom(42, 3), 20)).not.toEqual(draw(new SeededRandom(42, 4), 20));
    expect(draw(new SeededRandom(42, 3), 20)).not.toEqual(draw(new SeededRandom(43, 3), 20));
    expect(draw(new SeededRandom(2 ** 32 + 42, 3), 20)).not.toEqual(draw(new SeededRandom(42, 3), 20));
    expect(draw(new SeededRandom(-1, 0), 20)).not.toEqual(draw(new SeededRandom(0, 0), 20));
  });

  it('gives roughly uniform 32-bit values and standard normal samples', () => {
    const random = new SeededRandom(7);
    const n = 200_000;
    let sum = 0;
    let sumSquares = 0;
    let high = 0;
    for (let i = 0; i < n; i++) {
      if (random.nextUint32() >= 2 ** 31) high++;
      const x = random.nextNormal();
      sum += x;
      sumSquares += x * x;
    }
    expect(high / n).toBeCloseTo(0.5, 2);
    expect(sum / n).toBeCloseTo(0, 1);
    expect(Math.sqrt(sumSquares / n)).toBeCloseTo(1, 1);
  });

  it('fillFromTable picks entries by the low then high 16 bits of each draw', () => {
    const table = Uint16Array.from({ length: 65536 }, (_, i) => i);
    const out = new Uint16Array(7);
    new SeededRandom(5, 1).fillFromTable(out, table);
    const reference = new SeededRandom(5, 1);
    const expected: number[] = [];
    while (expected.length < out.length) {
      const r = reference.nextUint32();
      expected.push(r & 0xffff, r >>> 16);
    }
    expect([...out]).toEqual(expected.slice(0, out.length));
  });
});

describe('random float16 weights', () => {
  it('have the requested spread, stay finite and come out the same for the same stream', () => {
    const std = 0.05;
    const table = normalFloat16Table(std, 1);
    const count = (1 << 20) + 3; // more than one chunk, odd length
    const collect = (): Uint16Array => {
      const values = new Uint16Array(count);
      let at = 0;
      for (const chunk of randomFloat16Chunks(count, table, new SeededRandom(1, 9))) {
        values.set(new Uint16Array(chunk.buffer.slice(chunk.byteOffset, chunk.byteOffset + chunk.byteLength)), at);
        at += chunk.byteLength / 2;
      }
      expect(at).toBe(count);
      return values;
    };
    const first = collect();
    // Byte comparison: a deep equality over a million elements would dominate the test's time.
    expect(Buffer.from(collect().buffer).equals(Buffer.from(first.buffer))).toBe(true);
    let sumSquares = 0;
    let nonFinite = 0;
    for (const bits of first) {
      const value = fromFloat16Bits(bits);
      if (!Number.isFinite(value)) nonFinite++;
      sumSquares += value * value;
    }
    expect(nonFinite).toBe(0);
    expect(Math.sqrt(sumSquares / count)).toBeCloseTo(std, 2);
  });
});
