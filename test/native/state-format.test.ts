// native/state_format.cpp through binding._internal, without a model: every refusal of a saved state says why.
import { describe, expect, it } from 'vitest';
import { loadNativeAddon } from '../../src/native/loader.js';

const GGML_F16 = 1;
const GGML_Q8_0 = 8;
const format = () => loadNativeAddon()._internal.stateFormat;
const target = { fingerprint: 0x1234_5678_9abc_def0n, contextSize: 64, kvType: GGML_F16 };
const tokens = Int32Array.from([1, 2, 3, 4, 5]);
const payload = Uint8Array.from({ length: 100 }, (_, i) => (i * 37) & 0xff);

/** The native error `attempt` throws (a plain Error carrying errorName and code, as the addon throws it). */
function refusal(attempt: () => unknown): Error & { errorName?: string } {
  try {
    attempt();
  } catch (error) {
    return error as Error & { errorName?: string };
  }
  throw new Error('expected a refusal');
}

/** Checks a freshly written state after `edit` changed its bytes in place. */
function checkEdited(edit: (bytes: Uint8Array) => unknown): unknown {
  const bytes = format().write(target, tokens, payload);
  edit(bytes);
  return format().check(bytes, target, tokens);
}

/** Swaps the payload's first two runs of `length` bytes. */
function swapPayload(bytes: Uint8Array, length: number): void {
  const at = format().headerSize;
  const first = bytes.slice(at, at + length);
  bytes.copyWithin(at, at + length, at + 2 * length);
  bytes.set(first, at + length);
}

describe('state format (native/state_format.cpp)', () => {
  it('writes a header in front of the payload that checks out against the same target and tokens', () => {
    const bytes = format().write(target, tokens, payload);
    expect(bytes.length).toBe(format().headerSize + payload.length);
    expect(Array.from(bytes.subarray(format().headerSize))).toEqual(Array.from(payload));
    expect(format().check(bytes, target, tokens)).toBe(payload.length);
  });

  it('accepts a state written for another size when its tokens fit', () => {
    const bytes = format().write({ ...target, contextSize: 4096 }, tokens, payload);
    expect(format().check(bytes, target, tokens)).toBe(payload.length);
  });

  const cases: [string, () => unknown, RegExp][] = [
    ['too short to be a state', () => format().check(new Uint8Array(10), target, tokens), /not a saved context state \(only 10 bytes\)/],
    ['a wrong magic', () => {
      const bytes = format().write(target, tokens, payload);
      bytes[0] = 0x58;
      return format().check(bytes, target, tokens);
    }, /not a saved context state of this version/],
    ['truncated', () => format().check(format().write(target, tokens, payload).subarray(0, 150), target, tokens), /truncated/],
    ['another model', () => format().check(format().write(target, tokens, payload), { ...target, fingerprint: 1n }, tokens), /different model/],
    ['a flipped payload bit', () => checkEdited((bytes) => (bytes[format().headerSize + 50]! ^= 0x04)), /corrupted \(its checksum/],
    // the checksum runs over four lanes of 8-byte words: words moved between lanes, or within one, must not go unseen
    ['two payload words swapped between lanes', () => checkEdited((bytes) => swapPayload(bytes, 8)), /corrupted \(its checksum/],
    ['two payload blocks of 32 bytes swapped', () => checkEdited((bytes) => swapPayload(bytes, 32)), /corrupted \(its checksum/],
    ['a flipped bit in the tail after the last 32-byte block', () => checkEdited((bytes) => (bytes[bytes.length - 1]! ^= 0x80)), /corrupted \(its checksum/],
    ['another KV type', () => format().check(format().write(target, tokens, payload), { ...target, kvType: GGML_Q8_0 }, tokens), /saved with a f16 KV cache but this context uses q8_0/],
    ['more tokens than the target holds', () => format().check(format().write(target, tokens, payload), { ...target, contextSize: 4 }, tokens), /holds 5 tokens but this context holds only 4/],
    ['other tokens', () => format().check(format().write(target, tokens, payload), target, Int32Array.from([1, 2, 3, 4, 6])), /do not match the state/],
    ['fewer tokens', () => format().check(format().write(target, tokens, payload), target, tokens.subarray(0, 4)), /it holds 5 tokens, 4 were passed/],
  ];
  it.each(cases)('refuses %s with StateMismatch', (_name, attempt, message) => {
    const error = refusal(attempt);
    expect(error.errorName).toBe('StateMismatch');
    expect(error.message).toMatch(message);
  });

  it('refuses an unknown KV type id in the header without indexing ggml tables with it', () => {
    const bytes = format().write(target, tokens, payload);
    // kvType sits after magic(4) version(4) fingerprint(8) contextSize(4)
    new DataView(bytes.buffer, bytes.byteOffset).setUint32(20, 9999, true);
    const error = refusal(() => format().check(bytes, target, tokens));
    expect(error.errorName).toBe('StateMismatch');
    expect(error.message).toMatch(/unknown KV cache type \(9999\)/);
  });
});
