// The context keeps the longest common prefix of its KV cache and decodes only the rest.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import type { Model } from '../../src/engine/model.js';
import { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from './fixtures.js';

describe('prefix reuse', () => {
  let model: Model;
  let context: Context;
  beforeAll(async () => {
    model = await loadTinyModel();
    context = await model.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS });
  });
  afterAll(async () => {
    await context.dispose();
    await model.dispose();
  });

  it('evaluates a fresh prompt completely and mirrors it', async () => {
    await context.evaluate(new Int32Array(0));
    const prompt = syntheticPrompt(150);
    const result = await context.evaluate(prompt);
    expect(result).toMatchObject({ reused: 0, evaluated: 150 });
    expect(result.ms).toBeGreaterThanOrEqual(0);
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('after N tokens, N + k tokens reuse N and evaluate k', async () => {
    const base = syntheticPrompt(150);
    await context.evaluate(base);
    const extended = concat(base, syntheticPrompt(37, 2));
    expect(await context.evaluate(extended)).toMatchObject({ reused: 150, evaluated: 37 });
    expect(Array.from(context.tokens)).toEqual(Array.from(extended));
  });

  it('a token changed in the middle reuses exactly the prefix before it', async () => {
    const prompt = syntheticPrompt(200, 3);
    await context.evaluate(prompt);
    const edited = prompt.slice();
    edited[120] = 4242;
    expect(await context.evaluate(edited)).toMatchObject({ reused: 120, evaluated: 80 });
    expect(Array.from(context.tokens)).toEqual(Array.from(edited));
  });

  it('the same prompt again re-decodes only its last token', async () => {
    const prompt = syntheticPrompt(90, 4);
    await context.evaluate(prompt);
    expect(await context.evaluate(prompt)).toMatchObject({ reused: 89, evaluated: 1 });
    expect(context.tokens.length).toBe(90);
  });

  it('a shorter prompt that is a prefix of the cache drops the tail', async () => {
    const prompt = syntheticPrompt(90, 5);
    await context.evaluate(prompt);
    const shorter = prompt.subarray(0, 40);
    expect(await context.evaluate(shorter)).toMatchObject({ reused: 39, evaluated: 1 });
    expect(Array.from(context.tokens)).toEqual(Array.from(shorter));
  });

  it('an empty prompt clears the cache', async () => {
    await context.evaluate(syntheticPrompt(30, 6));
    expect(await context.evaluate(new Int32Array(0))).toMatchObject({ reused: 0, evaluated: 0 });
    expect(context.tokens.length).toBe(0);
  });

  it('a prompt longer than one batch is decoded in several batches and mirrored exactly', async () => {
    const prompt = syntheticPrompt(64 * 5 + 7, 7);
    expect(await context.evaluate(prompt)).toMatchObject({ reused: 0, evaluated: 327 });
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('release frees the cache; the next call starts from nothing', async () => {
    const prompt = syntheticPrompt(50, 8);
    await context.evaluate(prompt);
    await context.release();
    expect(context.tokens.length).toBe(0);
    expect(await context.evaluate(prompt)).toMatchObject({ reused: 0, evaluated: 50 });
  });
});
