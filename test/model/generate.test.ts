// Generation: stop conditions, streaming, and the mirror after each of them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import type { Model } from '../../src/engine/model.js';
import type { GenerateResult } from '../../src/engine/types.js';
import { TEST_THREADS, loadTinyModel, syntheticPrompt } from './fixtures.js';

describe('generate', () => {
  let model: Model;
  let context: Context;
  let reference: GenerateResult;
  const prompt = syntheticPrompt(40, 41);

  beforeAll(async () => {
    model = await loadTinyModel();
    context = await model.createContext({ contextSize: 1024, threads: TEST_THREADS });
    reference = await context.generate({ prompt, maxTokens: 40, sampling: { temperature: 0 } });
  });
  afterAll(async () => {
    await context.dispose();
    await model.dispose();
  });

  it('stops at maxTokens and keeps prompt + reply in the cache', () => {
    expect(reference.stopReason).toBe('maxTokens');
    expect(reference.tokens.length).toBe(40);
    expect(reference.timings.tokensGenerated).toBe(40);
    expect(reference.text).toBe(model.detokenize(reference.tokens));
    expect(Array.from(context.tokens)).toEqual([...prompt, ...reference.tokens]);
  });

  it('streams pieces that add up to the reply text', async () => {
    const pieces: string[] = [];
    const tokens: number[] = [];
    const result = await context.generate({
      prompt,
      maxTokens: 40,
      sampling: { temperature: 0 },
      onToken: (piece, token) => {
        pieces.push(piece);
        tokens.push(token);
      },
    });
    expect(pieces.join('')).toBe(result.text);
    expect(result.text).toBe(reference.text);
    expect(tokens.every((t) => Array.from(result.tokens).includes(t))).toBe(true);
  });

  it('cuts the reply before a stop string and keeps only the tokens before it', async () => {
    // A stop string that starts inside the reply: the text of tokens 5..6 of the reference.
    const before = model.detokenize(reference.tokens.subarray(0, 5));
    const stop = model.detokenize(reference.tokens.subarray(5, 7));
    expect(stop.length).toBeGreaterThan(0);
    const at = reference.text.indexOf(stop);
    const streamed: string[] = [];
    const result = await context.generate({
      prompt,
      maxTokens: 40,
      sampling: { temperature: 0 },
      stop: [stop],
      onToken: (piece) => streamed.push(piece),
    });
    expect(result.stopReason).toBe('stopString');
    expect(result.text).toBe(reference.text.slice(0, at));
    expect(streamed.join('')).toBe(result.text);
    expect(at).toBeLessThanOrEqual(before.length);
    const kept = Array.from(result.tokens);
    expect(kept).toEqual(Array.from(reference.tokens.subarray(0, kept.length)));
    expect(model.detokenize(result.tokens).length).toBeLessThanOrEqual(at);
    expect(Array.from(context.tokens)).toEqual([...prompt, ...kept]);
  });

  it('reads a token\'s text when it is sampled: the token that completes a stop string is never decoded', async () => {
    // Token k of the reference completes the stop string as soon as it is sampled, so the engine decodes the prompt
    // (one step) and tokens 0..k-1, never token k (it used to, and then dropped it from the cache).
    const stop = model.detokenize(reference.tokens.subarray(5, 7));
    let k = 0;
    while (!model.detokenize(reference.tokens.subarray(0, k + 1)).includes(stop)) k += 1;
    expect(k).toBeGreaterThan(0);
    const result = await context.generate({ prompt, maxTokens: 40, sampling: { temperature: 0 }, stop: [stop], profile: true });
    expect(result.stopReason).toBe('stopString');
    const steps = result.profile!.steps;
    // One step for the prompt (here only its last token: the rest is reused), then one per decoded reply token.
    expect(steps.length).toBe(1 + k);
    // A reply that ends at maxTokens still has every token decoded: the cache holds prompt + reply.
    const capped = await context.generate({ prompt, maxTokens: 4, sampling: { temperature: 0 }, profile: true });
    expect(capped.profile!.steps.length).toBe(1 + 4);
    expect(Array.from(context.tokens)).toEqual([...prompt, ...capped.tokens]);
  });

  it('rethrows an error thrown by onToken and stays usable with a true mirror', async () => {
    const boom = new Error('listener failed');
    let calls = 0;
    await expect(
      context.generate({
        prompt,
        maxTokens: 40,
        sampling: { temperature: 0 },
        onToken: () => {
          calls += 1;
          throw boom;
        },
      }),
    ).rejects.toBe(boom);
    expect(calls).toBe(1);
    const mirror = Array.from(context.tokens);
    expect(mirror.slice(0, prompt.length)).toEqual(Array.from(prompt));
    expect(mirror.length).toBeLessThan(prompt.length + 40);
    const again = await context.generate({ prompt, maxTokens: 40, sampling: { temperature: 0 } });
    expect(Array.from(again.tokens)).toEqual(Array.from(reference.tokens));
  });

  it('applies penalties: a strong repeat penalty changes a repetitive greedy reply', async () => {
    const penalised = await context.generate({
      prompt,
      maxTokens: 40,
      sampling: { temperature: 0, repeatPenalty: 5, penaltyLastN: 64 },
    });
    const distinct = (tokens: Int32Array) => new Set(Array.from(tokens)).size;
    expect(distinct(penalised.tokens)).toBeGreaterThan(distinct(reference.tokens));
  });

  it('reports timings', async () => {
    const result = await context.generate({ prompt, maxTokens: 5, sampling: { temperature: 0 } });
    const t = result.timings;
    expect(t.promptReused + t.promptEvaluated).toBe(prompt.length);
    expect(t.firstTokenMs).toBeGreaterThanOrEqual(t.promptMs);
    expect(t.generateMs).toBeGreaterThan(0);
    expect(t.tokensGenerated).toBe(5);
  });
});
