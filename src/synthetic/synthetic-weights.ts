import { SeededRandom } from './synthetic-random.js';

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** IEEE 754 binary16 bits of `value`, rounded to nearest even (overflow → ±Infinity, NaN stays NaN). */
export function toFloat16Bits(value: number): number {
  f32[0] = value;
  const bits = f32Bits[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  const mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa !== 0 ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    // Subnormal half: the value in units of 2^-24 is the full 24-bit significand shifted right.
    const shift = 14 - halfExponent;
    if (shift > 24) return sign;
    const significand = mantissa | 0x800000;
    return sign | roundShift(significand, shift);
  }
  // Adding the rounded mantissa may carry into the exponent, which is exactly the right result.
  return sign | ((halfExponent << 10) + roundShift(mantissa, 13));
}

/** `value >> shift`, rounded to nearest with ties to even. */
function roundShift(value: number, shift: number): number {
  const kept = value >>> shift;
  const rest = value - kept * 2 ** shift;
  const half = 2 ** (shift - 1);
  return rest > half || (rest === half && (kept & 1) === 1) ? kept + 1 : kept;
}

/** The number that binary16 `bits` encode. */
export function fromFloat16Bits(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 0x1f) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/**
 * 65536 float16 samples of N(0, std²). Drawing weights by random 16-bit index into this table turns
 * per-element Box–Muller and float→half conversion into one table lookup, which is what makes a
 * 180M-parameter model take seconds in JavaScript.
 */
export function normalFloat16Table(std: number, seed: number): Uint16Array {
  const random = new SeededRandom(seed, 0x7ab1e);
  const table = new Uint16Array(65536);
  for (let i = 0; i < table.length; i++) table[i] = toFloat16Bits(std * random.nextNormal());
  return table;
}

/** Elements per chunk a weight producer yields (2 MiB of float16): big writes, small memory. */
export const WEIGHT_CHUNK_ELEMENTS = 1 << 20;

/**
 * Yields `count` random float16 weights drawn from `table`, as little-endian bytes, in chunks.
 * The same buffer is refilled for each chunk (the GGUF writer consumes a chunk before asking for more).
 */
export function* randomFloat16Chunks(count: number, table: Uint16Array, random: SeededRandom): Generator<Uint8Array> {
  const buffer = new Uint16Array(Math.min(count, WEIGHT_CHUNK_ELEMENTS));
  for (let done = 0; done < count; done += buffer.length) {
    const chunk = count - done >= buffer.length ? buffer : buffer.subarray(0, count - done);
    random.fillFromTable(chunk, table);
    yield littleEndianBytes(chunk);
  }
}

/** `count` float32 copies of `value` as bytes (norm weights: a handful of KB, written at once). */
export function constantFloat32Bytes(count: number, value: number): Uint8Array {
  return littleEndianBytes(new Float32Array(count).fill(value));
}

function littleEndianBytes(array: Uint16Array | Float32Array): Uint8Array {
  if (!isLittleEndianHost) {
    throw new Error('synthetic model generation needs a little-endian host (GGUF data is little-endian)');
  }
  return new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
}

const isLittleEndianHost = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
