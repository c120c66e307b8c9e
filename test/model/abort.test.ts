// An AbortSignal stops a long prompt decode; the context stays usable and its mirror true.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import type { Model } from '../../src/engine/model.js';
import { TEST_THREADS, loadTinyModel, syntheticPrompt } from './fixtures.js';

const BATCH = 16;

describe('abort', () => {
  let model: Model;
  let context: Context;
  beforeAll(async () => {
    model = await loadTinyModel();
    context = await model.createContext({ contextSize: 2048, batchSize: BATCH, threads: TEST_THREADS });
  });
  afterAll(async () => {
    await context.dispose();
    await model.dispose();
  });

  it('stops a long prompt decode between batches; the next evaluate resumes from what was kept', async () => {
    const prompt = syntheticPrompt(2048, 31);
    await context.evaluate(new Int32Array(0));
    const controller = new AbortController();
    const evaluation = context.evaluate(prompt, { signal: controller.signal });
    // One event-loop turn: the worker thread is decoding by now, 128 batches from the end.
    setImmediate(() => controller.abort());
    await expect(evaluation).rejects.toMatchObject({ errorName: 'Aborted' });

    const kept = context.tokens;
    expect(kept.length).toBeLessThan(prompt.length);
    expect(kept.length % BATCH).toBe(0); // the partly decoded batch was removed from the cache
    expect(Array.from(kept)).toEqual(Array.from(prompt.subarray(0, kept.length)));

    const resumed = await context.evaluate(prompt);
    expect(resumed).toMatchObject({ reused: kept.length, evaluated: prompt.length - kept.length });
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('after an abort, generation equals that of a context that was never aborted', async () => {
    const prompt = syntheticPrompt(600, 32);
    await context.evaluate(new Int32Array(0));
    const controller = new AbortController();
    const evaluation = context.evaluate(prompt, { signal: controller.signal });
    controller.abort(); // before the first batch
    await expect(evaluation).rejects.toMatchObject({ errorName: 'Aborted' });
    expect(context.tokens.length).toBe(0);

    const afterAbort = await context.generate({ prompt, maxTokens: 12, sampling: { temperature: 0 } });
    const clean = await model.createContext({ contextSize: 1024, batchSize: BATCH, threads: TEST_THREADS });
    try {
      const reference = await clean.generate({ prompt, maxTokens: 12, sampling: { temperature: 0 } });
      expect(Array.from(afterAbort.tokens)).toEqual(Array.from(reference.tokens));
    } finally {
      await clean.dispose();
    }
  });

  it('keeps the reusable prefix when a re-evaluation is aborted', async () => {
    const base = syntheticPrompt(100, 33);
    await context.evaluate(base);
    const changed = base.slice();
    changed[60] = 4343;
    const controller = new AbortController();
    controller.abort();
    await expect(context.evaluate(changed, { signal: controller.signal })).rejects.toMatchObject({ errorName: 'Aborted' });
    // Rejected before starting: nothing was touched.
    expect(Array.from(context.tokens)).toEqual(Array.from(base));
  });

  it('an abort during generation ends the reply early with stopReason "aborted"', async () => {
    const prompt = syntheticPrompt(50, 34);
    const controller = new AbortController();
    let pieces = 0;
    const result = await context.generate({
      prompt,
      maxTokens: 200,
      sampling: { temperature: 0 },
      signal: controller.signal,
      onToken: () => {
        pieces += 1;
        if (pieces === 3) controller.abort();
      },
    });
    expect(result.stopReason).toBe('aborted');
    expect(result.tokens.length).toBeGreaterThanOrEqual(1);
    expect(result.tokens.length).toBeLessThan(200);
    expect(Array.from(context.tokens)).toEqual([...prompt, ...result.tokens]);
  });
});
