import { toFloat16Bits } from '../util/float16.js';
import { SeededRandom } from './synthetic-random.js';

// The conversions live in util (the GGUF converter needs them too); re-exported for existing callers.
export { fromFloat16Bits, toFloat16Bits } from '../util/float16.js';

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
