// Every bad input gets its typed error; none of them crashes the process or corrupts the context.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { loadNativeAddon } from '../../src/native/loader.js';
import { ensureTestModel } from '../helpers/models.js';
import { TEST_THREADS, loadTinyModel, syntheticPrompt } from './fixtures.js';

describe('typed errors on bad input', () => {
  let model: Model;
  let context: Context;
  const vocabSize = 128256;
  beforeAll(async () => {
    model = await loadTinyModel();
    context = await model.createContext({ contextSize: 256, threads: TEST_THREADS });
  });
  afterAll(async () => {
    await context.dispose();
    await model.dispose();
  });

  it('token id >= vocab size: InvalidToken, before anything is decoded', async () => {
    const prompt = syntheticPrompt(20, 51);
    await context.evaluate(prompt);
    const bad = Int32Array.from([...prompt.subarray(0, 10), vocabSize]);
    await expect(context.evaluate(bad)).rejects.toMatchObject({ errorName: 'InvalidToken', message: expect.stringContaining(String(vocabSize)) });
    await expect(context.evaluate(Int32Array.from([-5]))).rejects.toMatchObject({ errorName: 'InvalidToken' });
    await expect(context.generate({ prompt: bad, maxTokens: 4 })).rejects.toMatchObject({ errorName: 'InvalidToken' });
    await expect(context.scoreNext(prompt, Int32Array.from([1, vocabSize + 7]))).rejects.toMatchObject({ errorName: 'InvalidToken' });
    await expect(context.loadState(new Uint8Array(64), bad)).rejects.toMatchObject({ errorName: 'InvalidToken' });
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('prompt longer than the context: ContextOverflow naming both numbers', async () => {
    await expect(context.evaluate(syntheticPrompt(300, 52))).rejects.toMatchObject({
      errorName: 'ContextOverflow',
      message: expect.stringMatching(/300 tokens.*256/),
    });
    await expect(context.generate({ prompt: syntheticPrompt(250, 52), maxTokens: 10 })).rejects.toMatchObject({
      errorName: 'ContextOverflow',
      message: expect.stringMatching(/250 tokens.*maxTokens is 10.*256/),
    });
    await expect(context.scoreNext(syntheticPrompt(257, 52), Int32Array.from([1]))).rejects.toMatchObject({
      errorName: 'ContextOverflow',
    });
  });

  it('a second call while one runs: ContextBusy, and the first one completes normally', async () => {
    const prompt = syntheticPrompt(200, 53);
    await context.evaluate(new Int32Array(0));
    const first = context.evaluate(prompt);
    expect(context.busy).toBe(true);
    await expect(context.evaluate(prompt)).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(context.generate({ prompt, maxTokens: 1 })).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(context.saveState()).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(context.release()).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(first).resolves.toMatchObject({ reused: 0, evaluated: 200 });
    expect(context.busy).toBe(false);
  });

  it('the native busy flag refuses concurrent calls on its own too', async () => {
    const handle = await loadNativeAddon().loadModel(await ensureTestModel('tiny'), {});
    const raw = await handle.createContext({ contextSize: 256, batchSize: 512, threads: TEST_THREADS, kvCacheType: 'f16', flashAttention: 'auto', swaCache: 'full' });
    try {
      const first = raw.evaluate(syntheticPrompt(200, 54));
      expect(raw.isBusy()).toBe(true);
      await expect(raw.evaluate(syntheticPrompt(10, 54))).rejects.toMatchObject({ code: 4012 });
      await expect(raw.dispose()).rejects.toMatchObject({ code: 4012 });
      expect(() => raw.tokens()).toThrow(expect.objectContaining({ code: 4012 }));
      await first;
      expect(raw.tokens().length).toBe(200);
    } finally {
      await raw.dispose();
      await handle.dispose();
    }
  });

  it('invalid generate options: InvalidArgument', async () => {
    const prompt = syntheticPrompt(5, 55);
    const cases: unknown[] = [
      { prompt, maxTokens: 0 },
      { prompt, maxTokens: 2.5 },
      { prompt: Array.from(prompt), maxTokens: 4 },
      { prompt, maxTokens: 4, sampling: { temperature: -1 } },
      { prompt, maxTokens: 4, sampling: { topP: 0 } },
      { prompt, maxTokens: 4, sampling: { seed: -3 } },
      { prompt, maxTokens: 4, stop: [''] },
      { prompt, maxTokens: 4, onToken: 'yes' },
      { prompt, maxTokens: 4, colour: 'red' },
    ];
    for (const options of cases) {
      await expect(context.generate(options as never)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    }
    await expect(context.generate({ prompt: new Int32Array(0), maxTokens: 4 })).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(context.evaluate([1, 2, 3] as never)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(context.scoreNext(new Int32Array(0), Int32Array.from([1]))).rejects.toMatchObject({ errorName: 'InvalidArgument' });
  });

  it('settings the model cannot run: a typed InferenceFailed, not a crash', async () => {
    // The tiny model's head size (16) is not a multiple of q8_0's block size (32).
    await expect(model.createContext({ contextSize: 256, kvCacheType: 'q8_0' })).rejects.toMatchObject({
      errorName: 'InferenceFailed',
      message: expect.stringContaining('q8_0'),
    });
  });

  it('vocab-only model asked for a context (hence to generate): VocabOnlyModel', async () => {
    const vocabOnly = await loadModel({ path: await ensureTestModel('tiny'), vocabOnly: true });
    try {
      expect(vocabOnly.info.vocabOnly).toBe(true);
      await expect(vocabOnly.createContext({ contextSize: 256 })).rejects.toMatchObject({ errorName: 'VocabOnlyModel' });
    } finally {
      await vocabOnly.dispose();
    }
  });

  it('use after dispose: ObjectDisposed; dispose waits for the running call and is idempotent', async () => {
    const doomed = await model.createContext({ contextSize: 256, threads: TEST_THREADS });
    const running = doomed.evaluate(syntheticPrompt(150, 56));
    const disposing = doomed.dispose();
    expect(doomed.dispose()).toBe(disposing);
    await expect(running).resolves.toMatchObject({ evaluated: 150 });
    await disposing;
    expect(doomed.disposed).toBe(true);
    expect(doomed.tokens.length).toBe(0);
    await expect(doomed.evaluate(syntheticPrompt(5, 56))).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
    await expect(doomed.generate({ prompt: syntheticPrompt(5, 56), maxTokens: 2 })).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
    await expect(doomed.saveState()).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
  });

  it('a context keeps its model alive after the model is disposed', async () => {
    const owner = await loadTinyModel();
    const survivor = await owner.createContext({ contextSize: 256, threads: TEST_THREADS });
    await owner.dispose();
    expect(() => owner.tokenize('x')).toThrow(expect.objectContaining({ errorName: 'ObjectDisposed' }));
    const result = await survivor.generate({ prompt: syntheticPrompt(10, 57), maxTokens: 3, sampling: { temperature: 0 } });
    expect(result.tokens.length).toBe(3);
    await survivor.dispose();
  });
});
