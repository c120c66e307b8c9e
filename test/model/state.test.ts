// saveState / loadState: a restored context continues exactly like the original, and states that
// do not belong to a context are refused with StateMismatch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { ensureTestModel } from '../helpers/models.js';
import { TEST_THREADS, loadTinyModel, syntheticPrompt } from './fixtures.js';

describe('saved state', () => {
  let model: Model;
  let original: Context;
  let bytes: Uint8Array;
  const prompt = syntheticPrompt(120, 21);

  beforeAll(async () => {
    model = await loadTinyModel();
    original = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    await original.evaluate(prompt);
    bytes = await original.saveState();
  });
  afterAll(async () => {
    await original.dispose();
    await model.dispose();
  });

  it('restored into a fresh context, continues exactly as the original', async () => {
    const restored = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      await restored.loadState(bytes, prompt);
      expect(Array.from(restored.tokens)).toEqual(Array.from(prompt));
      const expected = await original.generate({ prompt, maxTokens: 16, sampling: { temperature: 0 } });
      const actual = await restored.generate({ prompt, maxTokens: 16, sampling: { temperature: 0 } });
      expect(actual.timings.promptReused).toBe(prompt.length - 1);
      expect(actual.timings.promptEvaluated).toBe(1);
      expect(Array.from(actual.tokens)).toEqual(Array.from(expected.tokens));
    } finally {
      await restored.dispose();
    }
  });

  it('can be restored into a larger context of the same model', async () => {
    const larger = await model.createContext({ contextSize: 1024, threads: TEST_THREADS });
    try {
      await larger.loadState(bytes, prompt);
      expect(larger.tokens.length).toBe(prompt.length);
    } finally {
      await larger.dispose();
    }
  });

  it('is refused when the tokens do not match it', async () => {
    const other = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      const wrong = prompt.slice();
      wrong[5] = 777;
      await expect(other.loadState(bytes, wrong)).rejects.toMatchObject({ errorName: 'StateMismatch' });
      await expect(other.loadState(bytes, prompt.subarray(0, 100))).rejects.toMatchObject({ errorName: 'StateMismatch' });
      expect(other.tokens.length).toBe(0);
    } finally {
      await other.dispose();
    }
  });

  it('is refused when it does not fit the context', async () => {
    const small = await model.createContext({ contextSize: 64, threads: TEST_THREADS });
    try {
      await expect(small.loadState(bytes, prompt)).rejects.toMatchObject({
        errorName: 'StateMismatch',
        message: expect.stringContaining('120 tokens'),
      });
    } finally {
      await small.dispose();
    }
  });

  it('is refused when it was saved with another KV cache type', async () => {
    // The tiny model's head size (16) cannot hold a quantized cache, so the header is edited
    // instead: bytes 20..23 hold the ggml type of the saved cache (8 = q8_0).
    const other = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      const edited = bytes.slice();
      new DataView(edited.buffer).setUint32(20, 8, true);
      await expect(other.loadState(edited, prompt)).rejects.toMatchObject({
        errorName: 'StateMismatch',
        message: expect.stringContaining('q8_0 KV cache'),
      });
    } finally {
      await other.dispose();
    }
  });

  it('is refused when it is garbage or truncated', async () => {
    const other = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      await expect(other.loadState(new Uint8Array(10), prompt)).rejects.toMatchObject({ errorName: 'StateMismatch' });
      const corrupt = bytes.slice();
      corrupt[0] = 0;
      await expect(other.loadState(corrupt, prompt)).rejects.toMatchObject({ errorName: 'StateMismatch' });
      await expect(other.loadState(bytes.subarray(0, bytes.length - 100), prompt)).rejects.toMatchObject({
        errorName: 'StateMismatch',
      });
      // Still usable afterwards.
      expect(await other.evaluate(prompt)).toMatchObject({ reused: 0, evaluated: prompt.length });
    } finally {
      await other.dispose();
    }
  });

  it('is refused by a context of another model', async () => {
    const otherModel = await loadModel({ path: await ensureTestModel('tiny', 'llama-spm') });
    const otherContext = await otherModel.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      await expect(otherContext.loadState(bytes, Int32Array.from(prompt, (t) => t % 1000))).rejects.toMatchObject({
        errorName: 'StateMismatch',
        message: expect.stringContaining('different model'),
      });
    } finally {
      await otherContext.dispose();
      await otherModel.dispose();
    }
  });
});
