/**
 * Seeded pseudo-random numbers for synthetic weights: xoshiro128** (32-bit state words, so it runs
 * on plain int32 arithmetic without BigInt). Not cryptographic; the point is speed and determinism.
 */
export class SeededRandom {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /**
   * @param seed any safe integer; equal seeds and streams give equal sequences on every platform.
   * @param stream a second integer that selects an independent sequence (e.g. a tensor index).
   */
  constructor(seed: number, stream = 0) {
    // Expand (seed, stream) into four well-mixed words; an all-zero state would stick at zero.
    const whole = Math.trunc(seed);
    const high = Math.floor(whole / 4294967296); // seeds beyond 32 bits must not alias smaller ones
    let mix = (whole ^ Math.imul(high, 0x85ebca6b) ^ Math.imul(Math.trunc(stream) + 1, 0x9e3779b9)) >>> 0;
    const next = (): number => {
      mix = (mix + 0x9e3779b9) >>> 0;
      let z = mix;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Next uniformly distributed unsigned 32-bit integer. */
  nextUint32(): number {
    const s1 = this.s1;
    const x = Math.imul(s1, 5);
    const result = Math.imul((x << 7) | (x >>> 25), 9) >>> 0;
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = (this.s3 << 11) | (this.s3 >>> 21);
    return result;
  }

  /** Uniform in [0, 1) with 32 bits of resolution. */
  nextFloat(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Standard normal sample (Box–Muller; one of the pair is discarded for simplicity). */
  nextNormal(): number {
    const u = 1 - this.nextFloat(); // (0, 1]: log stays finite
    const v = this.nextFloat();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }

  /**
   * Fills `out` with table entries picked by 16-bit random indices, two per 32-bit draw.
   * This is the hot loop of model synthesis (hundreds of millions of elements), so the state lives in
   * locals for its duration.
   */
  fillFromTable(out: Uint16Array, table: Uint16Array): void {
    if (table.length !== 65536) throw new RangeError('fillFromTable needs a table of 65536 entries');
    let s0 = this.s0;
    let s1 = this.s1;
    let s2 = this.s2;
    let s3 = this.s3;
    const n = out.length;
    for (let i = 0; i < n; i += 2) {
      const x = Math.imul(s1, 5);
      const r = Math.imul((x << 7) | (x >>> 25), 9);
      const t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = (s3 << 11) | (s3 >>> 21);
      out[i] = table[r & 0xffff]!;
      if (i + 1 < n) out[i + 1] = table[r >>> 16]!;
    }
    this.s0 = s0;
    this.s1 = s1;
    this.s2 = s2;
    this.s3 = s3;
  }
}
