// Prompt-lookup drafting (native/lookup_draft.h) on the tiny synthetic model: a lone generation decodes guessed tokens
// beside the sampled one and keeps them while the sampler agrees. The reply must be the one step-by-step decoding
// gives (to the near-tie rule), whatever the sampler; the KV cache must hold exactly the mirror afterwards (no cell
// of a guess the sampler did not keep); maxTokens and stop strings end the reply where they would without guesses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/engine/model.js';
import type { SharedContext } from '../../src/engine/shared-context.js';
import type { GenerateOptions, GenerateResult } from '../../src/engine/types.js';
import { LlamaDialogError } from '../../src/errors.js';
import { expectSameGreedy } from '../kits/greedy-agreement.js';
import { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from '../kits/models.js';

const GREEDY = { temperature: 0 } as const;
const MAX_TOKENS = 48;
/** Random f16-ish weights: batch shapes move a log-probability by rounding only (test/native/shared-context.test.ts). */
const TIE = 0.01;

/**
 * Prompts whose text repeats (a block said three times, a cycle of a few tokens), so that the last tokens of the
 * reply occur earlier and lookup has something to guess from, and plain ones.
 */
const PROMPTS = [
  concat(syntheticPrompt(40, 1), syntheticPrompt(40, 1), syntheticPrompt(40, 1)),
  Int32Array.from({ length: 90 }, (_, i) => 1500 + (i % 3)),
  Int32Array.from({ length: 60 }, (_, i) => 2000 + (i % 5)),
  syntheticPrompt(120, 7),
  syntheticPrompt(30, 9),
];

describe('prompt-lookup drafting: a lone generation decodes guesses and keeps them only where the sampler agrees', () => {
  let model: Model;
  let shared: SharedContext;

  /** A generation on a fresh single sequence of the shared context (alone in its engine, so it may draft). */
  async function generateAlone(options: Omit<GenerateOptions, 'maxTokens'> & { maxTokens?: number }): Promise<{ result: GenerateResult; cellsUsed: number; tokens: number }> {
    const sequence = shared.createSequence({ contextSize: 512 });
    try {
      const result = await sequence.generate({ maxTokens: MAX_TOKENS, ...options });
      return { result, cellsUsed: shared.cellsUsed(), tokens: sequence.tokens.length };
    } finally {
      await sequence.dispose();
    }
  }

  beforeAll(async () => {
    model = await loadTinyModel();
    shared = await model.createSharedContext({ sequences: 2, contextSize: 1024, batchSize: 64, threads: TEST_THREADS });
  });
  afterAll(async () => {
    await shared?.dispose();
    await model?.dispose();
  });

  it('gives the greedy reply of step-by-step decoding, with guesses decoded and kept on repeating text', async () => {
    let drafted = 0;
    let kept = 0;
    for (const prompt of PROMPTS) {
      const plain = await generateAlone({ prompt, sampling: GREEDY, draftTokens: 0 });
      const guessed = await generateAlone({ prompt, sampling: GREEDY, draftTokens: 8 });
      expect(plain.result.timings.draftedTokens).toBe(0);
      await expectSameGreedy(model, guessed.result.tokens, plain.result.tokens, prompt, { tie: TIE, threads: TEST_THREADS, contextSize: 1024 });
      expect(guessed.result.timings.acceptedDraftTokens).toBeLessThanOrEqual(guessed.result.timings.draftedTokens!);
      expect(guessed.result.tokens.length).toBe(guessed.result.timings.tokensGenerated);
      drafted += guessed.result.timings.draftedTokens!;
      kept += guessed.result.timings.acceptedDraftTokens!;
    }
    // Random weights fall into loops, which lookup guesses: both paths of the acceptance rule ran.
    expect(drafted).toBeGreaterThan(0);
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(drafted + 1);
  });

  it('leaves exactly the mirror in the KV cache: no cell of a guess the sampler did not keep', async () => {
    for (const prompt of PROMPTS) {
      const { result, cellsUsed, tokens } = await generateAlone({ prompt, sampling: GREEDY, draftTokens: 8 });
      // The cache holds the prompt and every reply token but the last sampled one, unless a kept guess decoded it.
      expect(tokens).toBeGreaterThanOrEqual(prompt.length + result.tokens.length - 1);
      expect(tokens).toBeLessThanOrEqual(prompt.length + result.tokens.length);
      expect(cellsUsed, 'KV cells after the reply').toBe(tokens);
    }
  });

  it('ends at maxTokens exactly, with guesses in flight', async () => {
    for (const maxTokens of [1, 2, 3, 5, 9]) {
      const plain = await generateAlone({ prompt: PROMPTS[1]!, sampling: GREEDY, maxTokens, draftTokens: 0 });
      const guessed = await generateAlone({ prompt: PROMPTS[1]!, sampling: GREEDY, maxTokens, draftTokens: 8 });
      expect(guessed.result.tokens.length).toBe(plain.result.tokens.length);
      expect(guessed.result.stopReason).toBe(plain.result.stopReason);
      expect(guessed.cellsUsed).toBe(guessed.tokens);
    }
  });

  it('cuts at a stop string as step-by-step decoding does, and drops the guesses after it from the cache', async () => {
    for (const prompt of PROMPTS.slice(0, 3)) {
      const plain = await generateAlone({ prompt, sampling: GREEDY, draftTokens: 0 });
      if (plain.result.tokens.length < 12) continue;
      // A piece of the reply's second half as the stop string: guesses run past it before the sampler reaches it.
      const stop = model.detokenize(plain.result.tokens.subarray(8, 10));
      if (stop.trim().length === 0) continue;
      const cutPlain = await generateAlone({ prompt, sampling: GREEDY, stop: [stop], draftTokens: 0 });
      const cutGuessed = await generateAlone({ prompt, sampling: GREEDY, stop: [stop], draftTokens: 8 });
      expect(cutGuessed.result.text).toBe(cutPlain.result.text);
      expect(Array.from(cutGuessed.result.tokens)).toEqual(Array.from(cutPlain.result.tokens));
      expect(cutGuessed.result.stopReason).toBe(cutPlain.result.stopReason);
      expect(cutGuessed.cellsUsed).toBe(cutGuessed.tokens);
    }
  });

  it('draws the same tokens from a seeded sampler: each kept guess is what the sampler drew at its row', async () => {
    const sampling = { temperature: 0.9, topK: 40, seed: 1234 };
    for (const prompt of PROMPTS.slice(0, 3)) {
      const plain = await generateAlone({ prompt, sampling, draftTokens: 0 });
      const guessed = await generateAlone({ prompt, sampling, draftTokens: 8 });
      const n = Math.min(plain.result.tokens.length, guessed.result.tokens.length);
      let same = 0;
      while (same < n && plain.result.tokens[same] === guessed.result.tokens[same]) same++;
      // One RNG draw per token either way; only a rounding difference between batch shapes could move a draw.
      expect(same, 'tokens before the first difference').toBeGreaterThanOrEqual(Math.min(n, 8));
    }
  });

  it('does not draft while another sequence shares the step, and refuses a bad draftTokens', async () => {
    const a = shared.createSequence({ contextSize: 512 });
    const b = shared.createSequence({ contextSize: 512 });
    try {
      const [ra, rb] = await Promise.all([
        a.generate({ prompt: PROMPTS[1]!, maxTokens: MAX_TOKENS, sampling: GREEDY, draftTokens: 8, profile: true }),
        b.generate({ prompt: PROMPTS[2]!, maxTokens: MAX_TOKENS, sampling: GREEDY, draftTokens: 8, profile: true }),
      ]);
      // Whether one of them ran some steps alone depends on when each request reached the compute thread; but a
      // step that both generated in holds exactly one token of each.
      const together = [...ra.profile!.steps, ...rb.profile!.steps].filter((step) => step.sequences === 2 && step.generating === 2);
      expect(together.length).toBeGreaterThan(0);
      for (const step of together) expect(step.batchTokens, `step ${step.step}`).toBe(2);
      await expect(a.generate({ prompt: PROMPTS[1]!, maxTokens: 4, draftTokens: -1 })).rejects.toSatisfy(
        (error: unknown) => error instanceof LlamaDialogError && error.errorName === 'InvalidArgument' && /draftTokens/.test(error.message),
      );
      await expect(a.generate({ prompt: PROMPTS[1]!, maxTokens: 4, draftTokens: 1.5 })).rejects.toBeInstanceOf(LlamaDialogError);
    } finally {
      await a.dispose();
      await b.dispose();
    }
  });
});
