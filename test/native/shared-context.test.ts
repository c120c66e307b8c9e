// Sequences of a shared context (SPEC §2.4, issue 11 items 1, 2 and 4) on the tiny synthetic model: batched decoding
// gives, token for token, what each prompt gives alone in its own context; aborts, errors and prefix copies stay
// per sequence; states move between sequences and own contexts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../src/engine/context.js';
import type { Model } from '../../src/engine/model.js';
import type { Sequence } from '../../src/engine/sequence.js';
import type { SharedContext } from '../../src/engine/shared-context.js';
import type { GenerateResult } from '../../src/engine/types.js';
import { LlamaDialogError } from '../../src/errors.js';
import { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from '../kits/models.js';
import { expectSameGreedy as expectSameGreedyAsReference } from '../kits/greedy-agreement.js';

const GREEDY = { temperature: 0 } as const;
const MAX_TOKENS = 24;

/** Prompts of different lengths, so that some sequences are still in their prompt phase while others generate. */
const prompts = Array.from({ length: 8 }, (_, i) => syntheticPrompt(20 + i * 37, 100 + i));

/** Both KV layouts: one cache for all (4096 cells), or a stream of 1024 cells per sequence. */
const LAYOUTS = [
  { kvLayout: 'unified', contextSize: 4096 },
  { kvLayout: 'perSequence', contextSize: 8 * 1024 },
] as const;

describe.each(LAYOUTS)('shared context ($kvLayout KV): sequences batched into one decode per step', ({ kvLayout, contextSize }) => {
  let model: Model;
  let shared: SharedContext;
  /** Each prompt's greedy reply in its own context: the reference every batched run must equal. */
  const alone: GenerateResult[] = [];

  async function ownContextReply(prompt: Int32Array, maxTokens = MAX_TOKENS): Promise<GenerateResult> {
    const context: Context = await model.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS });
    try {
      return await context.generate({ prompt, maxTokens, sampling: GREEDY });
    } finally {
      await context.dispose();
    }
  }

  /**
   * Greedy replies of a batched decode equal the reference under the near-tie rule (test/kits/greedy-agreement.ts):
   * on random weights a rounding difference moves a log-probability by far less than TIE.
   */
  const TIE = 0.01;
  let firstDivergences = 0;
  async function expectSameGreedy(received: Int32Array, reference: Int32Array, prompt: Int32Array): Promise<void> {
    const divergedAt = await expectSameGreedyAsReference(model, received, reference, prompt, { tie: TIE, threads: TEST_THREADS, contextSize: 1024 });
    if (divergedAt >= 0) firstDivergences++;
  }

  beforeAll(async () => {
    model = await loadTinyModel();
    for (const prompt of prompts) alone.push(await ownContextReply(prompt));
    shared = await model.createSharedContext({ sequences: 8, contextSize, kvLayout, batchSize: 64, threads: TEST_THREADS });
  });
  afterAll(async () => {
    if (firstDivergences > 0) console.info(`shared-context: ${firstDivergences} batched replies left the reference at a near-tie`);
    await shared?.dispose();
    await model?.dispose();
  });

  it('reports its shape and starts empty', () => {
    expect(shared.sequences).toBe(8);
    expect(shared.contextSize).toBe(contextSize);
    expect(shared.kvLayout).toBe(kvLayout);
    expect(shared.sequenceContextSize).toBe(kvLayout === 'unified' ? 4096 : 1024);
    expect(shared.kvBytesPerCell).toBeGreaterThan(0);
    expect(shared.liveSequences).toBe(0);
    expect(shared.cellsUsed()).toBe(0);
  });

  it.each([2, 4, 8])('%i sequences generating at once give the same tokens as each prompt alone', async (count) => {
    const sequences = Array.from({ length: count }, () => shared.createSequence({ contextSize: 512 }));
    try {
      expect(shared.liveSequences).toBe(count);
      const results = await Promise.all(
        sequences.map((sequence, i) => sequence.generate({ prompt: prompts[i]!, maxTokens: MAX_TOKENS, sampling: GREEDY, profile: true })),
      );
      for (const [i, result] of results.entries()) {
        await expectSameGreedy(result.tokens, alone[i]!.tokens, prompts[i]!);
        expect(result.stopReason).toBe(alone[i]!.stopReason);
        expect(Array.from(sequences[i]!.tokens)).toEqual([...prompts[i]!, ...result.tokens]);
        expect(sequences[i]!.kvBytes).toBe(sequences[i]!.tokens.length * shared.kvBytesPerCell);
      }
      // The batch really held several sequences at some step.
      const widest = Math.max(...results.flatMap((r) => r.profile!.steps.map((s) => s.sequences)));
      expect(widest).toBeGreaterThan(1);
      expect(widest).toBeLessThanOrEqual(count);
      expect(shared.cellsUsed()).toBe(sequences.reduce((sum, s) => sum + s.tokens.length, 0));
    } finally {
      await Promise.all(sequences.map((s) => s.dispose()));
    }
    expect(shared.liveSequences).toBe(0);
    expect(shared.cellsUsed()).toBe(0);
  });

  it('a batch smaller than the number of sequences is refused (llama.cpp would abort the process)', async () => {
    await expect(model.createSharedContext({ sequences: 4, contextSize: 2048, batchSize: 2, threads: TEST_THREADS })).rejects.toMatchObject({
      errorName: 'InvalidArgument',
      message: expect.stringMatching(/batchSize \(2, at most contextSize\) must be at least the number of sequences \(4\)/),
    });
    await expect(model.createSharedContext({ sequences: 8, contextSize: 4, threads: TEST_THREADS })).rejects.toMatchObject({
      errorName: 'InvalidArgument',
    });
  });

  it('a sequence reuses its own prefix (LCP) exactly like an own context', async () => {
    const sequence = shared.createSequence({ contextSize: 1024 });
    try {
      const first = await sequence.generate({ prompt: prompts[0]!, maxTokens: 8, sampling: GREEDY });
      const followUp = concat(prompts[0]!, first.tokens, syntheticPrompt(10, 7));
      const second = await sequence.generate({ prompt: followUp, maxTokens: 8, sampling: GREEDY });
      expect(second.timings.promptReused).toBe(prompts[0]!.length + first.tokens.length);
      expect(second.timings.promptEvaluated).toBe(10);
      const reference = await ownContextReply(followUp, 8);
      expect(Array.from(second.tokens)).toEqual(Array.from(reference.tokens));
    } finally {
      await sequence.dispose();
    }
  });

  it('aborting one sequence mid-batch leaves the others untouched; the aborted one keeps prompt + partial reply', async () => {
    const sequences = Array.from({ length: 4 }, () => shared.createSequence({ contextSize: 512 }));
    // The aborted one asks for many tokens, so that the abort (sent from a stream callback on the JS thread)
    // surely lands while it is still generating.
    const longRun = 300;
    const longReference = await ownContextReply(prompts[1]!, longRun);
    try {
      const controller = new AbortController();
      let pieces = 0;
      const results = await Promise.all(
        sequences.map((sequence, i) =>
          sequence.generate({
            prompt: prompts[i]!,
            maxTokens: i === 1 ? longRun : MAX_TOKENS,
            sampling: GREEDY,
            ...(i === 1
              ? { signal: controller.signal, onToken: () => { if (++pieces === 3) controller.abort(); } }
              : {}),
          }),
        ),
      );
      const aborted = results[1]!;
      expect(aborted.stopReason).toBe('aborted');
      expect(aborted.tokens.length).toBeLessThan(longRun);
      await expectSameGreedy(aborted.tokens, longReference.tokens.subarray(0, aborted.tokens.length), prompts[1]!);
      expect(Array.from(sequences[1]!.tokens)).toEqual([...prompts[1]!, ...aborted.tokens]);
      for (const i of [0, 2, 3]) await expectSameGreedy(results[i]!.tokens, alone[i]!.tokens, prompts[i]!);

      // Still usable: a new prompt on the aborted sequence gives what an own context gives.
      const again = await sequences[1]!.generate({ prompt: prompts[5]!, maxTokens: MAX_TOKENS, sampling: GREEDY });
      await expectSameGreedy(again.tokens, alone[5]!.tokens, prompts[5]!);
    } finally {
      await Promise.all(sequences.map((s) => s.dispose()));
    }
  });

  it('copyPrefixFrom: a spawned sequence reuses a 600-token prefix and decodes only the suffix', async () => {
    const source = shared.createSequence({ contextSize: 1024 });
    const spawned = shared.createSequence({ contextSize: 1024 });
    try {
      const prefix = syntheticPrompt(600, 41);
      await source.evaluate(concat(prefix, syntheticPrompt(12, 42)));
      await spawned.copyPrefixFrom(source, 600);
      expect(Array.from(spawned.tokens)).toEqual(Array.from(prefix));
      expect(spawned.kvBytes).toBe(600 * shared.kvBytesPerCell);

      const prompt = concat(prefix, syntheticPrompt(30, 43));
      const result = await spawned.generate({ prompt, maxTokens: 16, sampling: GREEDY });
      expect(result.timings.promptReused).toBe(600);
      expect(result.timings.promptEvaluated).toBe(30);
      const cold = await ownContextReply(prompt, 16);
      expect(Array.from(result.tokens)).toEqual(Array.from(cold.tokens));
      // The source is unchanged by the copy and by what the copy did afterwards.
      expect(source.tokens.length).toBe(612);
    } finally {
      await Promise.all([source.dispose(), spawned.dispose()]);
    }
  });

  it('copyPrefixFrom with the expected tokens copies from a running source, only what it holds of them', async () => {
    const source = shared.createSequence({ contextSize: 1024 });
    const spawned = shared.createSequence({ contextSize: 1024 });
    const diverging = shared.createSequence({ contextSize: 1024 });
    try {
      const prefix = syntheticPrompt(600, 51);
      const sourcePrompt = concat(prefix, syntheticPrompt(20, 52));
      const running = source.generate({ prompt: sourcePrompt, maxTokens: 40, sampling: GREEDY });
      expect(source.busy).toBe(true);
      // Without the expected tokens a running source is refused, as before.
      await expect(spawned.copyPrefixFrom(source, 600)).rejects.toMatchObject({ errorName: 'ContextBusy' });
      const prompt = concat(prefix, syntheticPrompt(30, 53));
      // Queued behind the source's request: by then its prompt is in the cache, and 600 tokens of it match.
      expect(await spawned.copyPrefixFrom(source, 600, prompt)).toBe(600);
      const other = concat(prefix.subarray(0, 250), syntheticPrompt(350, 54));
      expect(await diverging.copyPrefixFrom(source, 600, other)).toBe(250);
      expect(diverging.tokens.length).toBe(250);
      const result = await spawned.generate({ prompt, maxTokens: 16, sampling: GREEDY });
      expect(result.timings.promptReused).toBe(600);
      expect(result.timings.promptEvaluated).toBe(30);
      const cold = await ownContextReply(prompt, 16);
      await expectSameGreedy(result.tokens, cold.tokens, prompt);
      const sourceResult = await running;
      expect(Array.from(source.tokens)).toEqual([...sourcePrompt, ...sourceResult.tokens]);
    } finally {
      await Promise.all([source.dispose(), spawned.dispose(), diverging.dispose()]);
    }
  });

  it('saveState / loadState of a sequence restores its mirror and the same greedy continuation', async () => {
    const original = shared.createSequence({ contextSize: 1024 });
    const restored = shared.createSequence({ contextSize: 1024 });
    try {
      const first = await original.generate({ prompt: prompts[2]!, maxTokens: 8, sampling: GREEDY });
      const tokens = original.tokens;
      const bytes = await original.saveState();
      await restored.loadState(bytes, tokens);
      expect(Array.from(restored.tokens)).toEqual(Array.from(tokens));
      const next = concat(tokens, syntheticPrompt(5, 9));
      const a = await original.generate({ prompt: next, maxTokens: 12, sampling: GREEDY });
      const b = await restored.generate({ prompt: next, maxTokens: 12, sampling: GREEDY });
      expect(b.timings.promptReused).toBe(tokens.length);
      expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
      expect(first.tokens.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([original.dispose(), restored.dispose()]);
    }
  });

  it('the state of an own context moves into a sequence and back when the KV stream counts agree (unified), and is refused otherwise (perSequence)', async () => {
    if (kvLayout === 'perSequence') return expectStatesRefusedAcrossStreamCounts();
    const context = await model.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS });
    const sequence = shared.createSequence({ contextSize: 1024 });
    try {
      await context.generate({ prompt: prompts[3]!, maxTokens: 6, sampling: GREEDY });
      const tokens = context.tokens;
      await sequence.loadState(await context.saveState(), tokens);
      expect(Array.from(sequence.tokens)).toEqual(Array.from(tokens));
      const next = concat(tokens, syntheticPrompt(4, 11));
      const fromContext = await context.generate({ prompt: next, maxTokens: 10, sampling: GREEDY });
      const fromSequence = await sequence.generate({ prompt: next, maxTokens: 10, sampling: GREEDY });
      expect(Array.from(fromSequence.tokens)).toEqual(Array.from(fromContext.tokens));
      // ...and a sequence's state loads into an own context too.
      const back = await model.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS });
      try {
        await back.loadState(await sequence.saveState(), sequence.tokens);
        expect(Array.from(back.tokens)).toEqual(Array.from(sequence.tokens));
      } finally {
        await back.dispose();
      }
    } finally {
      await Promise.all([context.dispose(), sequence.dispose()]);
    }
  });

  /**
   * perSequence: llama.cpp's state records the KV stream count (one for an own context, one per sequence here), so
   * states do not move between the two; the refusal is a typed error and the target keeps nothing of it.
   */
  async function expectStatesRefusedAcrossStreamCounts(): Promise<void> {
    const context = await model.createContext({ contextSize: 1024, batchSize: 64, threads: TEST_THREADS });
    const sequence = shared.createSequence({ contextSize: 1024 });
    try {
      await context.evaluate(prompts[3]!);
      await sequence.evaluate(prompts[4]!);
      await expect(sequence.loadState(await context.saveState(), context.tokens)).rejects.toMatchObject({
        errorName: 'StateMismatch',
        message: expect.stringContaining('perSequence'),
      });
      expect(sequence.tokens).toHaveLength(0);
      await sequence.evaluate(prompts[4]!);
      await expect(context.loadState(await sequence.saveState(), sequence.tokens)).rejects.toMatchObject({ errorName: 'StateMismatch' });
      expect(context.tokens).toHaveLength(0);
      // Both still work.
      expect(await context.evaluate(prompts[3]!)).toMatchObject({ evaluated: prompts[3]!.length });
    } finally {
      await Promise.all([context.dispose(), sequence.dispose()]);
    }
  }

  it('release() of a sequence drops its cells but keeps the shared context', async () => {
    const sequence = shared.createSequence({ contextSize: 256 });
    try {
      await sequence.evaluate(prompts[0]!);
      expect(shared.cellsUsed()).toBe(prompts[0]!.length);
      await sequence.release();
      expect(sequence.tokens.length).toBe(0);
      expect(sequence.kvBytes).toBe(0);
      expect(shared.cellsUsed()).toBe(0);
      const result = await sequence.evaluate(prompts[0]!);
      expect(result).toMatchObject({ reused: 0, evaluated: prompts[0]!.length });
    } finally {
      await sequence.dispose();
    }
  });

  it('profile: true reports every step of the generation; without it there is no profile', async () => {
    const sequence = shared.createSequence({ contextSize: 512 });
    try {
      // Step by step (no prompt-lookup guesses: test/native/prompt-lookup-draft.test.ts covers those steps).
      const profiled = await sequence.generate({ prompt: prompts[1]!, maxTokens: 8, sampling: GREEDY, profile: true, draftTokens: 0 });
      const steps = profiled.profile!.steps;
      // prompt chunks (batch 64) + one step per generated token that was decoded
      expect(steps.length).toBe(Math.ceil(prompts[1]!.length / 64) + profiled.tokens.length);
      // the prompt's chunks bring prompt tokens, every later step the token sampled last
      const promptChunks = Math.ceil(prompts[1]!.length / 64);
      expect(steps.map((step) => step.generating)).toEqual([...Array(promptChunks).fill(0), ...Array(steps.length - promptChunks).fill(1)]);
      for (const step of steps) {
        expect(step.batchTokens).toBeGreaterThanOrEqual(1);
        expect(step.sequences).toBe(1);
        expect(step.decodeMs).toBeGreaterThanOrEqual(0);
        expect(step.nKv % 256 === 0 || step.nKv === shared.sequenceContextSize).toBe(true);
        expect(step.nKv).toBeGreaterThanOrEqual(Math.min(step.cellsUsed, shared.sequenceContextSize));
      }
      expect(steps.at(-1)!.cellsUsed).toBe(prompts[1]!.length + profiled.tokens.length);
      expect(steps.some((s) => s.sampleMs > 0)).toBe(true);
      // llama.cpp counts reused graphs with no_perf = true as well: one-token steps of one shape reuse theirs.
      expect(steps.some((s) => s.graphReused > 0)).toBe(true);
      expect(profiled.timings.endedAt!).toBeGreaterThan(profiled.timings.startedAt!);
      // steps are numbered and timed on the clock of the timings, in order, inside the request
      for (let k = 1; k < steps.length; k++) {
        expect(steps[k]!.step).toBeGreaterThan(steps[k - 1]!.step);
        expect(steps[k]!.startedAt).toBeGreaterThanOrEqual(steps[k - 1]!.startedAt + steps[k - 1]!.decodeMs);
      }
      expect(steps[0]!.startedAt).toBeGreaterThanOrEqual(profiled.timings.startedAt!);
      expect(steps.at(-1)!.startedAt).toBeLessThanOrEqual(profiled.timings.endedAt!);
      const plain = await sequence.generate({ prompt: prompts[1]!, maxTokens: 8, sampling: GREEDY });
      expect(plain.profile).toBeUndefined();
    } finally {
      await sequence.dispose();
    }
  });

  it('profile: sequences decoded together report the same step number and start, so a step counts once', async () => {
    const sequences = [shared.createSequence({ contextSize: 512 }), shared.createSequence({ contextSize: 512 })];
    try {
      const [a, b] = await Promise.all(
        sequences.map((sequence, k) => sequence.generate({ prompt: prompts[k]!, maxTokens: 8, sampling: GREEDY, profile: true })),
      );
      const stepsOfB = new Map(b!.profile!.steps.map((step) => [step.step, step]));
      const together = a!.profile!.steps.filter((step) => stepsOfB.has(step.step));
      expect(together.length).toBeGreaterThan(0);
      for (const step of together) {
        const twin = stepsOfB.get(step.step)!;
        expect(step.sequences).toBe(2);
        expect(step.generating).toBeLessThanOrEqual(2);
        // a step without prompt tokens: both sequences decoded the token they had sampled
        if (step.batchTokens === 2) expect(step.generating).toBe(2);
        expect(twin).toMatchObject({ sequences: 2, generating: step.generating, startedAt: step.startedAt, decodeMs: step.decodeMs, batchTokens: step.batchTokens });
      }
      // a step only one of them took part in has a number of its own
      const alone = a!.profile!.steps.filter((step) => !stepsOfB.has(step.step));
      for (const step of alone) expect(step.sequences).toBe(1);
    } finally {
      await Promise.all(sequences.map((sequence) => sequence.dispose()));
    }
  });

  it('refuses bad requests per sequence before anything is queued', async () => {
    const sequences = [shared.createSequence({ contextSize: 256 }), shared.createSequence({ contextSize: 256 })];
    try {
      const good = sequences[0]!.generate({ prompt: prompts[0]!, maxTokens: 8, sampling: GREEDY });
      await expect(
        sequences[1]!.generate({ prompt: Int32Array.from([1, model.info.vocabSize]), maxTokens: 8, sampling: GREEDY }),
      ).rejects.toMatchObject({ errorName: 'InvalidToken' });
      // Refused on the JS thread: the other sequence's generation is still running, untouched.
      expect(sequences[0]!.busy).toBe(true);
      await expectSameGreedy((await good).tokens, alone[0]!.tokens.subarray(0, 8), prompts[0]!);
      await expect(sequences[1]!.evaluate(syntheticPrompt(257))).rejects.toMatchObject({ errorName: 'ContextOverflow' });
      expect(sequences[1]!.tokens.length).toBe(0);
    } finally {
      await Promise.all(sequences.map((s) => s.dispose()));
    }
  });

  it('createSequence beyond `sequences` is InsufficientMemory; a disposed sequence frees its id', async () => {
    const all = Array.from({ length: 8 }, () => shared.createSequence({ contextSize: 64 }));
    let error: unknown;
    try {
      shared.createSequence({ contextSize: 64 });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(LlamaDialogError);
    expect(error).toMatchObject({ errorName: 'InsufficientMemory' });
    await all[3]!.dispose();
    const reused: Sequence = shared.createSequence({ contextSize: 64 });
    expect(reused.tokens.length).toBe(0);
    await Promise.all([...all, reused].map((s) => s.dispose()));
  });

  it('a decode that fails for one sequence fails only that one: the batch is retried per sequence', async () => {
    // 256 cells: A holds 200 and generates; B's prompt chunk cannot find room next to it (llama_decode returns 1).
    const small = await model.createSharedContext({ sequences: 2, contextSize: 256, batchSize: 64, threads: TEST_THREADS });
    try {
      const a = small.createSequence({ contextSize: 256 });
      const b = small.createSequence({ contextSize: 256 });
      const prompt = syntheticPrompt(200, 51);
      await a.evaluate(prompt);
      const [generated, evaluated] = await Promise.allSettled([
        a.generate({ prompt, maxTokens: 40, sampling: GREEDY, profile: true }),
        b.evaluate(syntheticPrompt(100, 52)),
      ]);
      expect(evaluated.status).toBe('rejected');
      // llama_decode's 1 (no free cell): a full fixed cache is InsufficientMemory, with its size and cap.
      expect((evaluated as PromiseRejectedResult).reason).toMatchObject({ errorName: 'InsufficientMemory' });
      expect(((evaluated as PromiseRejectedResult).reason as Error).message).toMatch(/^no free KV cells: all \d+ cells of the shared context are in use \(its cap is \d+\)/);
      expect(b.tokens.length).toBe(0); // nothing of the failed chunk stays in the cache or the mirror
      expect(generated.status).toBe('fulfilled');
      const result = (generated as PromiseFulfilledResult<GenerateResult>).value;
      expect(result.tokens.length).toBe(40);
      expect(Array.from(a.tokens)).toEqual([...prompt, ...result.tokens]);
      const reference = await ownContextReply(prompt, 40);
      await expectSameGreedy(result.tokens, reference.tokens, prompt);
      expect(small.cellsUsed()).toBe(240);
      // B works again once there is room.
      await a.release();
      expect(await b.evaluate(syntheticPrompt(100, 52))).toMatchObject({ reused: 0, evaluated: 100 });
    } finally {
      await small.dispose();
    }
  });

  it('copyPrefixFrom across two shared contexts is InvalidArgument', async () => {
    const other = await model.createSharedContext({ sequences: 2, contextSize: 256, threads: TEST_THREADS });
    const mine = shared.createSequence({ contextSize: 256 });
    const theirs = other.createSequence({ contextSize: 256 });
    try {
      await theirs.evaluate(prompts[0]!);
      await expect(mine.copyPrefixFrom(theirs, 10)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
      await expect(mine.copyPrefixFrom(mine, 10)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
      expect(mine.tokens.length).toBe(0);
    } finally {
      await mine.dispose();
      await other.dispose();
    }
  });
});
