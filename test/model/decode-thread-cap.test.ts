// The process-wide decode thread cap (speech synthesis holds a core, decodes use the cores left): a capped context
// still decodes, from its next step on, and the cap comes off again; bad caps are typed errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/engine/model.js';
import { decodeThreadCap, holdCoresBesideDecoding } from '../../src/engine/decode-thread-cap.js';
import { loadNativeAddon } from '../../src/native/loader.js';
import { loadTinyModel, syntheticPrompt } from './fixtures.js';

describe('decode thread cap', () => {
  let model: Model;
  beforeAll(async () => {
    model = await loadTinyModel();
  });
  afterAll(async () => {
    loadNativeAddon().setDecodeThreadCap(0);
    await model.dispose();
  });

  it('is the cores left by the holds, at least one, and none without holds', () => {
    expect(decodeThreadCap(0, 2)).toBe(0);
    expect(decodeThreadCap(1, 2)).toBe(1);
    expect(decodeThreadCap(1, 16)).toBe(15);
    expect(decodeThreadCap(3, 2)).toBe(1);
  });

  it('a context generates the same greedy tokens under a cap of one thread, and again once it is lifted', async () => {
    const prompt = syntheticPrompt(200, 7);
    const generate = async (): Promise<number[]> => {
      const context = await model.createContext({ contextSize: 1024, threads: 2 });
      try {
        return Array.from((await context.generate({ prompt, maxTokens: 24, sampling: { temperature: 0 } })).tokens);
      } finally {
        await context.dispose();
      }
    };
    const free = await generate();
    const release = holdCoresBesideDecoding(64);
    let capped: number[];
    try {
      capped = await generate();
    } finally {
      release();
      release(); // idempotent: a second call frees no other hold
    }
    expect(capped).toEqual(free);
    expect(await generate()).toEqual(free);
  });

  it('refuses a cap that is not an integer from 0 to 4096 with InvalidArgument', () => {
    const addon = loadNativeAddon();
    for (const bad of [-1, 1.5, 5000, Number.NaN]) expect(() => addon.setDecodeThreadCap(bad)).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    expect(() => (addon.setDecodeThreadCap as (cap?: unknown) => void)('2')).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
  });
});
