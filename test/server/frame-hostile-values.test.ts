// Inputs the fuzz tier (test/fuzz) found reaching the TypeScript surface untyped, one regression case each: every one
// is now a LlamaDialogError, and a refused call leaves the object as it was.
import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../src/errors.js';
import { encodeFrame } from '../../src/server/frame-codec.js';
import { refusal } from '../kits/refusal.js';

describe('encodeFrame refuses values it cannot write', () => {
  it('encodeFrame: values without a JSON form are MalformedMessage', () => {
    expect(refusal(() => encodeFrame(undefined))).toBe('MalformedMessage');
    expect(refusal(() => encodeFrame({ n: 1n }))).toBe('MalformedMessage');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(refusal(() => encodeFrame(cycle))).toBe('MalformedMessage');
  });
});
