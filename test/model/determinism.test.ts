// Reuse must be exact: what a context does after reusing a cached prefix equals what a fresh
// context does with the whole prompt.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/engine/model.js';
import { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from './fixtures.js';

describe('exact reuse', () => {
  let model: Model;
  beforeAll(async () => {
    model = await loadTinyModel();
  });
  afterAll(async () => {
    await model.dispose();
  });

  it('greedy generation after a reused prefix equals a fresh context fed the whole prompt', async () => {
    const reusing = await model.createContext({ contextSize: 1024, batchSize: 32, threads: TEST_THREADS });
    const fresh = await model.createContext({ contextSize: 1024, batchSize: 32, threads: TEST_THREADS });
    try {
      const prefix = syntheticPrompt(100, 11);
      const prompt = concat(prefix, model.tokenize(' and then the dragon said'));
      await reusing.evaluate(prefix);
      const reused = await reusing.generate({ prompt, maxTokens: 24, sampling: { temperature: 0 } });
      expect(reused.timings.promptReused).toBe(100);
      expect(reused.timings.promptEvaluated).toBe(prompt.length - 100);

      const whole = await fresh.generate({ prompt, maxTokens: 24, sampling: { temperature: 0 } });
      expect(whole.timings.promptReused).toBe(0);
      expect(Array.from(reused.tokens)).toEqual(Array.from(whole.tokens));
      expect(reused.text).toBe(whole.text);
      expect(reused.tokens.length).toBeGreaterThan(0);
    } finally {
      await reusing.dispose();
      await fresh.dispose();
    }
  });

  it('a second turn that extends the first reply reuses prompt + reply', async () => {
    const context = await model.createContext({ contextSize: 1024, threads: TEST_THREADS });
    try {
      const prompt = syntheticPrompt(60, 12);
      const first = await context.generate({ prompt, maxTokens: 10, sampling: { temperature: 0 } });
      expect(Array.from(context.tokens)).toEqual([...prompt, ...first.tokens]);
      const next = concat(prompt, first.tokens, syntheticPrompt(5, 13));
      const second = await context.generate({ prompt: next, maxTokens: 5, sampling: { temperature: 0 } });
      expect(second.timings.promptReused).toBe(prompt.length + first.tokens.length);
      expect(second.timings.promptEvaluated).toBe(5);
    } finally {
      await context.dispose();
    }
  });

  it('seeded sampling repeats exactly; another seed differs', async () => {
    const context = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      const prompt = syntheticPrompt(20, 14);
      const sampling = { temperature: 1.5, topK: 0, topP: 1, minP: 0, seed: 1234 };
      const a = await context.generate({ prompt, maxTokens: 20, sampling });
      const b = await context.generate({ prompt, maxTokens: 20, sampling });
      const c = await context.generate({ prompt, maxTokens: 20, sampling: { ...sampling, seed: 99 } });
      expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
      expect(Array.from(c.tokens)).not.toEqual(Array.from(a.tokens));
    } finally {
      await context.dispose();
    }
  });

  it('scoreNext gives a normalised log-distribution that agrees with greedy sampling', async () => {
    const context = await model.createContext({ contextSize: 512, threads: TEST_THREADS });
    try {
      const prompt = syntheticPrompt(30, 15);
      const all = Int32Array.from({ length: model.info.vocabSize }, (_, i) => i);
      const scores = await context.scoreNext(prompt, all);
      expect(scores.length).toBe(model.info.vocabSize);
      let total = 0;
      let best = 0;
      for (let i = 0; i < scores.length; i++) {
        total += Math.exp(scores[i]!);
        if (scores[i]! > scores[best]!) best = i;
      }
      expect(total).toBeCloseTo(1, 6);
      const greedy = await context.generate({ prompt, maxTokens: 1, sampling: { temperature: 0 } });
      expect(greedy.tokens[0] ?? -1).toBe(best);

      const picked = await context.scoreNext(prompt, Int32Array.from([best, 5, best]));
      expect(picked[0]).toBeCloseTo(scores[best]!, 9);
      expect(picked[1]).toBeCloseTo(scores[5]!, 9);
      expect(picked[2]).toBe(picked[0]);
    } finally {
      await context.dispose();
    }
  });
});
