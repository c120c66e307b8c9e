// One case list, run against the test kit's FakeContext and against the engine's Context on the tiny synthetic model:
// the fake that unit tests trust must refuse, reuse, stop and abort exactly as the engine does. An over-budget prompt
// once passed a fake and failed on llama.cpp; a case added here runs on both, so that cannot happen silently again.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/engine/model.js';
import type { SharedContext } from '../../src/engine/shared-context.js';
import type { InferenceContext, KvLayout } from '../../src/engine/types.js';
import { FakeContext, HashedLanguage } from '../kits/fake-engine/index.js';
import { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from '../kits/models.js';

/** Vocabulary of the tiny model (Llama 3 tokenizer); the fake uses the same so that one prompt is valid on both. */
const TINY_VOCAB_SIZE = 128_256;

interface ContextSettings {
  contextSize: number;
  batchSize?: number;
}

/** An engine the cases run on: how to open it, make a context, and what its vocabulary size is. */
interface EngineUnderContract {
  name: string;
  open(): Promise<void>;
  close(): Promise<void>;
  vocabSize(): number;
  createContext(settings: ContextSettings): Promise<InferenceContext>;
}

const fakeEngine: EngineUnderContract = {
  name: 'FakeContext (test kit)',
  open: async () => undefined,
  close: async () => undefined,
  vocabSize: () => TINY_VOCAB_SIZE,
  createContext: async (settings) =>
    new FakeContext({ ...settings, language: new HashedLanguage({ vocabSize: TINY_VOCAB_SIZE, firstSampledToken: 1000 }) }),
};

function realEngine(): EngineUnderContract {
  let model: Model | undefined;
  return {
    name: 'Context (llama.cpp, tiny synthetic model)',
    open: async () => {
      model = await loadTinyModel();
    },
    close: async () => {
      await model?.dispose();
    },
    vocabSize: () => model!.info.vocabSize,
    createContext: (settings) => model!.createContext({ ...settings, threads: TEST_THREADS }),
  };
}

/** The same cases on a sequence of a shared context (SPEC §2.4: one API, two physical forms), in either KV layout. */
function sharedSequenceEngine(kvLayout: KvLayout): EngineUnderContract {
  let model: Model | undefined;
  const sharedContexts: SharedContext[] = [];
  return {
    name: `Sequence of a SharedContext, ${kvLayout} KV (llama.cpp, tiny synthetic model)`,
    open: async () => {
      model = await loadTinyModel();
    },
    close: async () => {
      await Promise.all(sharedContexts.map((shared) => shared.dispose()));
      await model?.dispose();
    },
    vocabSize: () => model!.info.vocabSize,
    createContext: async (settings) => {
      // A second, idle sequence shares the context so that the case runs on a multi-sequence engine.
      const shared = await model!.createSharedContext({
        sequences: 2,
        contextSize: settings.contextSize * 2,
        kvLayout,
        ...(settings.batchSize !== undefined ? { batchSize: settings.batchSize } : {}),
        threads: TEST_THREADS,
      });
      sharedContexts.push(shared);
      await shared.createSequence({ contextSize: 16 }).evaluate(Int32Array.from([1000, 1001, 1002]));
      return shared.createSequence({ contextSize: settings.contextSize });
    },
  };
}

const GREEDY = { temperature: 0 } as const;

describe.each([fakeEngine, realEngine(), sharedSequenceEngine('unified'), sharedSequenceEngine('perSequence')])('InferenceContext contract: $name', (engine) => {
  const opened: InferenceContext[] = [];
  const open = async (settings: ContextSettings): Promise<InferenceContext> => {
    const context = await engine.createContext(settings);
    opened.push(context);
    return context;
  };
  beforeAll(() => engine.open());
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((context) => context.dispose()));
  });
  afterAll(() => engine.close());

  it('after generate, the mirror is the prompt followed by the generated tokens', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(20, 1);
    const result = await context.generate({ prompt, maxTokens: 5, sampling: GREEDY });
    expect(result.stopReason).toBe('maxTokens');
    expect(result.tokens).toHaveLength(5);
    expect(result.timings).toMatchObject({ promptReused: 0, promptEvaluated: 20, tokensGenerated: 5 });
    expect(Array.from(context.tokens)).toEqual([...prompt, ...result.tokens]);
  });

  it('evaluate keeps the longest common prefix with the mirror and decodes only the rest', async () => {
    const context = await open({ contextSize: 256 });
    const first = syntheticPrompt(40, 2);
    expect(await context.evaluate(first)).toMatchObject({ reused: 0, evaluated: 40 });
    const changed = concat(first.subarray(0, 30), syntheticPrompt(10, 3));
    expect(await context.evaluate(changed)).toMatchObject({ reused: 30, evaluated: 10 });
    expect(Array.from(context.tokens)).toEqual(Array.from(changed));
    const extended = concat(changed, syntheticPrompt(5, 4));
    expect(await context.evaluate(extended)).toMatchObject({ reused: 40, evaluated: 5 });
  });

  it('a prompt the mirror already holds decodes its last token again (sampling needs its logits)', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(40, 5);
    await context.evaluate(prompt);
    expect(await context.evaluate(prompt)).toMatchObject({ reused: 39, evaluated: 1 });
    // A strict prefix of the mirror too: the rest is dropped and the prefix's last token decoded again.
    expect(await context.evaluate(prompt.subarray(0, 25))).toMatchObject({ reused: 24, evaluated: 1 });
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt.subarray(0, 25)));
    const again = await context.generate({ prompt: prompt.subarray(0, 25), maxTokens: 1, sampling: GREEDY });
    expect(again.timings).toMatchObject({ promptReused: 24, promptEvaluated: 1 });
  });

  it('an empty evaluate clears the mirror', async () => {
    const context = await open({ contextSize: 256 });
    await context.evaluate(syntheticPrompt(30, 6));
    expect(await context.evaluate(new Int32Array(0))).toMatchObject({ reused: 0, evaluated: 0 });
    expect(context.tokens).toHaveLength(0);
  });

  it('generate refuses prompt + maxTokens over the context with ContextOverflow and leaves the mirror alone', async () => {
    const context = await open({ contextSize: 256 });
    const held = syntheticPrompt(30, 7);
    await context.evaluate(held);
    const prompt = syntheticPrompt(250, 8);
    await expect(context.generate({ prompt, maxTokens: 7 })).rejects.toMatchObject({ errorName: 'ContextOverflow', code: 4004 });
    expect(Array.from(context.tokens)).toEqual(Array.from(held));
    // Exactly full is allowed.
    const full = await context.generate({ prompt, maxTokens: 6, sampling: GREEDY });
    expect(full.tokens.length).toBeLessThanOrEqual(6);
    expect(Array.from(context.tokens)).toEqual([...prompt, ...full.tokens]);
  });

  it('evaluate and scoreNext refuse a prompt longer than the context with ContextOverflow', async () => {
    const context = await open({ contextSize: 256 });
    await expect(context.evaluate(syntheticPrompt(257, 9))).rejects.toMatchObject({ errorName: 'ContextOverflow', code: 4004 });
    await expect(context.scoreNext(syntheticPrompt(257, 9), Int32Array.from([1]))).rejects.toMatchObject({ errorName: 'ContextOverflow' });
    expect(context.tokens).toHaveLength(0);
  });

  it('greedy generation depends only on the prompt, not on what the cache held before', async () => {
    const fresh = await open({ contextSize: 256 });
    const reusing = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(32, 10);
    await reusing.evaluate(concat(prompt.subarray(0, 20), syntheticPrompt(50, 11)));
    const a = await fresh.generate({ prompt, maxTokens: 8, sampling: GREEDY });
    const b = await reusing.generate({ prompt, maxTokens: 8, sampling: GREEDY });
    expect(b.timings.promptReused).toBe(20);
    expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
    expect(b.text).toBe(a.text);
    const again = await fresh.generate({ prompt, maxTokens: 8, sampling: GREEDY });
    expect(Array.from(again.tokens)).toEqual(Array.from(a.tokens));
  });

  it('streams the reply: the pieces given to onToken add up to the text', async () => {
    const context = await open({ contextSize: 256 });
    let streamed = '';
    const result = await context.generate({ prompt: syntheticPrompt(20, 12), maxTokens: 6, sampling: GREEDY, onToken: (piece) => (streamed += piece) });
    expect(streamed).toBe(result.text);
  });

  it('a stop string cuts the text before it and keeps only the tokens that end before it, in the reply and the mirror', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(20, 13);
    const whole = await context.generate({ prompt, maxTokens: 12, sampling: GREEDY });
    // Two ASCII characters from the second half of the greedy reply: generating again must stop there (or earlier).
    const start = whole.text.slice(Math.floor(whole.text.length / 2)).search(/[ -~]{2}/);
    expect(start).toBeGreaterThanOrEqual(0);
    const stop = whole.text.substr(Math.floor(whole.text.length / 2) + start, 2);
    const hit = whole.text.indexOf(stop);
    let streamed = '';
    const cut = await context.generate({ prompt, maxTokens: 12, sampling: GREEDY, stop: [stop], onToken: (piece) => (streamed += piece) });
    expect(cut.stopReason).toBe('stopString');
    expect(cut.text).toBe(whole.text.slice(0, hit));
    expect(streamed).toBe(cut.text);
    expect(cut.tokens.length).toBeLessThan(whole.tokens.length);
    expect(Array.from(cut.tokens)).toEqual(Array.from(whole.tokens.subarray(0, cut.tokens.length)));
    expect(Array.from(context.tokens)).toEqual([...prompt, ...cut.tokens]);
  });

  it('an abort during generation ends the reply with stopReason "aborted"; the mirror holds prompt + partial reply', async () => {
    const context = await open({ contextSize: 512 });
    const prompt = syntheticPrompt(40, 14);
    const controller = new AbortController();
    let pieces = 0;
    const result = await context.generate({
      prompt,
      maxTokens: 200,
      sampling: GREEDY,
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

  it('an abort during a long prompt keeps whole batches; the next evaluate reuses exactly those', async () => {
    const batchSize = 16;
    const context = await open({ contextSize: 2048, batchSize });
    const prompt = syntheticPrompt(2048, 15);
    const controller = new AbortController();
    const evaluation = context.evaluate(prompt, { signal: controller.signal });
    // One event-loop turn: the decode has started by then and is far from its 128th batch.
    setImmediate(() => controller.abort());
    await expect(evaluation).rejects.toMatchObject({ errorName: 'Aborted', code: 4014 });
    const kept = context.tokens;
    expect(kept.length).toBeLessThan(prompt.length);
    expect(kept.length % batchSize).toBe(0);
    expect(Array.from(kept)).toEqual(Array.from(prompt.subarray(0, kept.length)));
    expect(await context.evaluate(prompt.subarray(0, 100))).toMatchObject({ reused: Math.min(kept.length, 99) });
  });

  it('an already aborted signal is refused with Aborted before the mirror is touched', async () => {
    const context = await open({ contextSize: 256 });
    const held = syntheticPrompt(30, 16);
    await context.evaluate(held);
    const controller = new AbortController();
    controller.abort();
    await expect(context.evaluate(syntheticPrompt(30, 17), { signal: controller.signal })).rejects.toMatchObject({ errorName: 'Aborted' });
    await expect(context.generate({ prompt: syntheticPrompt(30, 17), maxTokens: 2, signal: controller.signal })).rejects.toMatchObject({
      errorName: 'Aborted',
    });
    expect(Array.from(context.tokens)).toEqual(Array.from(held));
  });

  it('an error thrown by onToken stops the generation and reaches the caller unchanged', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(20, 18);
    const listenerError = new Error('listener failed');
    await expect(
      context.generate({
        prompt,
        maxTokens: 50,
        sampling: GREEDY,
        onToken: () => {
          throw listenerError;
        },
      }),
    ).rejects.toBe(listenerError);
    const mirror = context.tokens;
    expect(mirror.length).toBeLessThan(prompt.length + 50);
    expect(Array.from(mirror.subarray(0, prompt.length))).toEqual(Array.from(prompt));
  });

  it('release empties the mirror and the context stays usable', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(30, 19);
    await context.evaluate(prompt);
    const heldBytes = context.kvBytes;
    expect(heldBytes).toBeGreaterThan(0);
    await context.release();
    expect(context.tokens).toHaveLength(0);
    expect(context.kvBytes).toBe(0);
    expect(await context.evaluate(prompt)).toMatchObject({ reused: 0, evaluated: 30 });
    expect(context.kvBytes).toBe(heldBytes);
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('a call while another runs is refused with ContextBusy; the running one completes', async () => {
    const context = await open({ contextSize: 512, batchSize: 16 });
    const held = syntheticPrompt(10, 29);
    await context.evaluate(held);
    const prompt = syntheticPrompt(200, 20);
    const first = context.evaluate(prompt);
    // While it runs, `tokens` still shows the mirror of the last finished operation.
    expect(Array.from(context.tokens)).toEqual(Array.from(held));
    await expect(context.evaluate(prompt)).rejects.toMatchObject({ errorName: 'ContextBusy', code: 4012 });
    await expect(context.generate({ prompt, maxTokens: 1 })).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(context.scoreNext(prompt, Int32Array.from([1]))).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(context.saveState()).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(context.release()).rejects.toMatchObject({ errorName: 'ContextBusy' });
    await expect(first).resolves.toMatchObject({ reused: 0, evaluated: 200 });
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('token ids outside the vocabulary are refused with InvalidToken before anything is decoded', async () => {
    const context = await open({ contextSize: 256 });
    const vocabSize = engine.vocabSize();
    const prompt = syntheticPrompt(20, 21);
    await context.evaluate(prompt);
    const bad = Int32Array.from([...prompt.subarray(0, 10), vocabSize]);
    await expect(context.evaluate(bad)).rejects.toMatchObject({ errorName: 'InvalidToken', code: 4011 });
    await expect(context.evaluate(Int32Array.from([-5]))).rejects.toMatchObject({ errorName: 'InvalidToken' });
    await expect(context.generate({ prompt: bad, maxTokens: 4 })).rejects.toMatchObject({ errorName: 'InvalidToken' });
    await expect(context.scoreNext(prompt, Int32Array.from([1, vocabSize + 7]))).rejects.toMatchObject({ errorName: 'InvalidToken' });
    await expect(context.loadState(new Uint8Array(64), bad)).rejects.toMatchObject({ errorName: 'InvalidToken' });
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
  });

  it('generate refuses an empty prompt and a maxTokens below 1 with InvalidArgument', async () => {
    const context = await open({ contextSize: 256 });
    await expect(context.generate({ prompt: new Int32Array(0), maxTokens: 4 })).rejects.toMatchObject({ errorName: 'InvalidArgument', code: 4010 });
    await expect(context.generate({ prompt: syntheticPrompt(5, 22), maxTokens: 0 })).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(context.scoreNext(new Int32Array(0), Int32Array.from([1]))).rejects.toMatchObject({ errorName: 'InvalidArgument' });
  });

  it('scoreNext gives one log-probability per candidate, the same each time, and leaves the prompt in the mirror', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(30, 23);
    const candidates = Int32Array.from([1000, 2000, 3000]);
    const scores = await context.scoreNext(prompt, candidates);
    expect(scores).toHaveLength(3);
    for (const score of scores) {
      expect(Number.isFinite(score)).toBe(true);
      expect(score).toBeLessThan(0);
    }
    expect(Array.from(scores).reduce((sum, score) => sum + Math.exp(score), 0)).toBeLessThanOrEqual(1);
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
    expect(Array.from(await context.scoreNext(prompt, candidates))).toEqual(Array.from(scores));
  });

  it('a saved state restores the mirror; other tokens or foreign bytes are refused with StateMismatch', async () => {
    const context = await open({ contextSize: 256 });
    const prompt = syntheticPrompt(40, 24);
    await context.evaluate(prompt);
    const state = await context.saveState();
    await context.evaluate(syntheticPrompt(10, 25));
    await expect(context.loadState(state, syntheticPrompt(40, 26))).rejects.toMatchObject({ errorName: 'StateMismatch', code: 4016 });
    await expect(context.loadState(new Uint8Array(8), prompt)).rejects.toMatchObject({ errorName: 'StateMismatch' });
    await context.loadState(state, prompt);
    expect(Array.from(context.tokens)).toEqual(Array.from(prompt));
    expect(await context.evaluate(concat(prompt, syntheticPrompt(4, 27)))).toMatchObject({ reused: 40, evaluated: 4 });
  });

  it('dispose is idempotent, empties the mirror, and later calls are refused with ObjectDisposed', async () => {
    const context = await open({ contextSize: 256 });
    await context.evaluate(syntheticPrompt(10, 28));
    await Promise.all([context.dispose(), context.dispose()]);
    expect(context.tokens).toHaveLength(0);
    await expect(context.evaluate(syntheticPrompt(10, 28))).rejects.toMatchObject({ errorName: 'ObjectDisposed', code: 4013 });
    await expect(context.generate({ prompt: syntheticPrompt(10, 28), maxTokens: 1 })).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
    await expect(context.release()).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
  });
});
