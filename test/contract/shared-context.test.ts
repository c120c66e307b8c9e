// One case list for a shared context and its sequences (SPEC §2.4), run against the test kit's FakeSharedContext and,
// once the engine's Model offers createSharedContext, against llama.cpp on the tiny model: the host's unit tests
// (shared-prefix spawn, KV snapshot pool over cells) trust the fake only as far as these cases hold on both.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Model } from '../../src/engine/model.js';
import type { InferenceSequence, KvLayout, RuntimeModel, SharedContextOptions, SharedInferenceContext } from '../../src/engine/types.js';
import { FakeSharedContext, HashedLanguage } from '../kits/fake-engine/index.js';
import { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from '../kits/models.js';

const TINY_VOCAB_SIZE = 128_256;

interface SharedEngineUnderContract {
  name: string;
  open(): Promise<void>;
  close(): Promise<void>;
  createShared(options: SharedContextOptions): Promise<SharedInferenceContext>;
}

const fakeEngine: SharedEngineUnderContract = {
  name: 'FakeSharedContext (test kit)',
  open: async () => undefined,
  close: async () => undefined,
  createShared: async (options) =>
    new FakeSharedContext({
      ...options,
      kvBytesPerCell: 64,
      sequence: () => ({ language: new HashedLanguage({ vocabSize: TINY_VOCAB_SIZE, firstSampledToken: 1000 }) }),
    }),
};

function realEngine(): SharedEngineUnderContract {
  let model: Model | undefined;
  return {
    name: 'shared context (llama.cpp, tiny synthetic model)',
    open: async () => {
      model = await loadTinyModel();
    },
    close: async () => {
      await model?.dispose();
    },
    createShared: (options) => (model as unknown as Required<RuntimeModel>).createSharedContext({ ...options, threads: TEST_THREADS }),
  };
}

/** The real engine joins as soon as its Model has createSharedContext (being built natively; not merged yet). */
async function engines(): Promise<SharedEngineUnderContract[]> {
  const { Model } = await import('../../src/engine/model.js');
  const hasShared = typeof (Model.prototype as { createSharedContext?: unknown }).createSharedContext === 'function';
  return hasShared ? [fakeEngine, realEngine()] : [fakeEngine];
}

const LAYOUTS: KvLayout[] = ['unified', 'perSequence'];
const cases = (await engines()).flatMap((engine) => LAYOUTS.map((kvLayout) => ({ engine, kvLayout, name: `${engine.name}, ${kvLayout} KV` })));

/** Opens the engine for the describe block and disposes what `open` made after each test. */
function sharedContextsOf(engine: SharedEngineUnderContract): (options: SharedContextOptions) => Promise<SharedInferenceContext> {
  const opened: SharedInferenceContext[] = [];
  beforeAll(() => engine.open());
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((shared) => shared.dispose()));
  });
  afterAll(() => engine.close());
  return async (options) => {
    const shared = await engine.createShared(options);
    opened.push(shared);
    return shared;
  };
}

describe.each(cases)('SharedInferenceContext contract: $name', ({ engine, kvLayout }) => {
  const create = sharedContextsOf(engine);
  /** Every sequence may hold 512 tokens in either layout (per sequence, a stream of 512 cells). */
  const open = (options: Partial<SharedContextOptions> = {}): Promise<SharedInferenceContext> => {
    const sequences = options.sequences ?? 4;
    const contextSize = kvLayout === 'unified' ? 512 : 512 * sequences;
    return create({ sequences, contextSize, kvLayout, ...options });
  };

  it('a new sequence is empty; its kvBytes and the shared cellsUsed follow the cells it holds', async () => {
    const shared = await open();
    const sequence = shared.createSequence({ contextSize: 128 });
    expect(sequence.shared).toBe(shared);
    expect(sequence.contextSize).toBe(128);
    expect(sequence.tokens).toHaveLength(0);
    expect(sequence.kvBytes).toBe(0);
    expect(shared.kvBytesPerCell).toBeGreaterThan(0);
    await sequence.evaluate(syntheticPrompt(40, 1));
    expect(sequence.kvBytes).toBe(40 * shared.kvBytesPerCell);
    expect(shared.cellsUsed()).toBe(40);
    expect(shared.liveSequences).toBe(1);
  });

  it('refuses a sequence beyond `sequences` (InsufficientMemory) or larger than the context (InvalidArgument); dispose frees the id', async () => {
    const shared = await open({ sequences: 2 });
    const first = shared.createSequence({ contextSize: 64 });
    shared.createSequence({ contextSize: 64 });
    expect(() => shared.createSequence({ contextSize: 64 })).toThrow(expect.objectContaining({ errorName: 'InsufficientMemory' }));
    expect(shared.kvLayout).toBe(kvLayout);
    expect(shared.sequenceContextSize).toBe(512);
    expect(() => shared.createSequence({ contextSize: 513 })).toThrow(expect.objectContaining({ errorName: 'InvalidArgument' }));
    await first.dispose();
    expect(shared.liveSequences).toBe(1);
    expect(shared.createSequence({ contextSize: 64 }).tokens).toHaveLength(0);
  });

  it('copyPrefixFrom makes a sequence hold a prefix of another without decoding; its next evaluate decodes only the rest', async () => {
    const shared = await open();
    const source = shared.createSequence({ contextSize: 256 });
    const target = shared.createSequence({ contextSize: 256 });
    const common = syntheticPrompt(48, 2);
    await source.evaluate(concat(common, syntheticPrompt(16, 3)));
    await target.copyPrefixFrom(source, 48);
    expect(Array.from(target.tokens)).toEqual(Array.from(common));
    expect(await target.evaluate(concat(common, syntheticPrompt(8, 4)))).toMatchObject({ reused: 48, evaluated: 8 });
    // The source is untouched.
    expect(source.tokens).toHaveLength(64);
  });

  it('a prefix copy is complete at once: a state saved right after it scores the next token as a cold decode does', async () => {
    const shared = await open();
    const source = shared.createSequence({ contextSize: 256 });
    const target = shared.createSequence({ contextSize: 256 });
    const cold = shared.createSequence({ contextSize: 256 });
    const common = syntheticPrompt(48, 12);
    await source.evaluate(concat(common, syntheticPrompt(16, 13)));
    expect(await target.copyPrefixFrom(source, 48)).toBe(48);
    // Per-sequence streams move bytes: the copy must be in place before anything reads it, not at the next decode.
    const bytes = await target.saveState();
    const restored = shared.createSequence({ contextSize: 256 });
    await restored.loadState(bytes, target.tokens);
    const next = concat(common, syntheticPrompt(1, 14));
    const candidates = Int32Array.from([1000, 1001, 1002, 2000, 3000]);
    const expected = await cold.scoreNext(next, candidates);
    const actual = await restored.scoreNext(next, candidates);
    // Another batch shape sums in another order: equal to a few 1e-4; a stale or missing copy is off by far more.
    for (let i = 0; i < candidates.length; i++) expect(actual[i]).toBeCloseTo(expected[i] as number, 2);
  });

  it('copyPrefixFrom refuses a length beyond the source and a sequence of another shared context', async () => {
    const shared = await open();
    const other = await open();
    const source = shared.createSequence({ contextSize: 128 });
    const target = shared.createSequence({ contextSize: 128 });
    const stranger = other.createSequence({ contextSize: 128 });
    await source.evaluate(syntheticPrompt(10, 5));
    await expect(target.copyPrefixFrom(source, 11)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await stranger.evaluate(syntheticPrompt(10, 5));
    await expect(target.copyPrefixFrom(stranger as InferenceSequence, 5)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    expect(target.tokens).toHaveLength(0);
  });

  it('a saved sequence state loads into a new sequence, which then reuses all of it', async () => {
    const shared = await open();
    const sequence = shared.createSequence({ contextSize: 128 });
    const prompt = syntheticPrompt(30, 6);
    await sequence.evaluate(prompt);
    const bytes = await sequence.saveState();
    const tokens = sequence.tokens;
    await sequence.dispose();
    expect(shared.cellsUsed()).toBe(0);
    const restored = shared.createSequence({ contextSize: 128 });
    await restored.loadState(bytes, tokens);
    expect(Array.from(restored.tokens)).toEqual(Array.from(prompt));
    expect(await restored.evaluate(concat(prompt, syntheticPrompt(5, 7)))).toMatchObject({ reused: 30, evaluated: 5 });
  });

  it('dispose of the shared context disposes its sequences', async () => {
    const shared = await open();
    const sequence = shared.createSequence({ contextSize: 64 });
    await shared.dispose();
    await expect(sequence.evaluate(syntheticPrompt(4, 8))).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
    expect(sequence.kvBytes).toBe(0);
  });
});

describe.each(await engines())('SharedInferenceContext contract, KV sized to use: $name', (engine) => {
  const open = sharedContextsOf(engine);

  const SEQUENCES = 4;
  const PROMPT = 300;
  /** Greedy replies of each sequence, continuing its own prompt. */
  const replies = (sequences: InferenceSequence[], seed: number): Promise<number[][]> =>
    Promise.all(
      sequences.map(async (sequence, k) => {
        const prompt = concat(sequence.tokens, syntheticPrompt(6, seed + k));
        const result = await sequence.generate({ prompt, maxTokens: 6, sampling: { temperature: 0 } });
        return Array.from(result.tokens);
      }),
    );

  it('starts at contextSize, grows up to maxContextSize as its sequences fill it, shrinks when they leave; replies stay those of a fixed cache', async () => {
    const growing = await open({ sequences: SEQUENCES, contextSize: 256, maxContextSize: 2048 });
    const fixed = await open({ sequences: SEQUENCES, contextSize: 2048 });
    expect(growing.contextSize).toBe(256);
    expect(growing.maxContextSize).toBe(2048);
    // Each sequence may hold up to the cap, not just what the cache holds now.
    expect(growing.sequenceContextSize).toBe(2048);
    const grown = Array.from({ length: SEQUENCES }, () => growing.createSequence({ contextSize: 512 }));
    const reference = Array.from({ length: SEQUENCES }, () => fixed.createSequence({ contextSize: 512 }));
    // All at once: one engine step carries several prompts, so the growth happens inside a batched step.
    await Promise.all(grown.map((sequence, k) => sequence.evaluate(syntheticPrompt(PROMPT, 40 + k))));
    await Promise.all(reference.map((sequence, k) => sequence.evaluate(syntheticPrompt(PROMPT, 40 + k))));
    const crowded = growing.contextSize;
    expect(crowded).toBeGreaterThanOrEqual(SEQUENCES * PROMPT);
    expect(crowded).toBeLessThanOrEqual(2048);
    expect(growing.resizes).toBeGreaterThan(0);
    expect(await replies(grown, 60)).toEqual(await replies(reference, 60));

    const resizesBefore = growing.resizes ?? 0;
    await Promise.all(grown.slice(1).map((sequence) => sequence.dispose()));
    await Promise.all(reference.slice(1).map((sequence) => sequence.dispose()));
    const [stays] = grown as [InferenceSequence];
    const [stayed] = reference as [InferenceSequence];
    expect(growing.contextSize).toBeLessThan(crowded);
    expect(growing.contextSize).toBeGreaterThanOrEqual(Math.max(256, growing.cellsUsed()));
    expect(growing.resizes).toBeGreaterThan(resizesBefore);
    // What the remaining sequence held moved with the cache: it reuses all of it and answers as before.
    expect(Array.from(stays.tokens)).toEqual(Array.from(stayed.tokens));
    expect(await replies([stays], 70)).toEqual(await replies([stayed], 70));
  });

  it('at its cap it refuses as a fixed cache does, and the other sequences keep their cells', async () => {
    const growing = await open({ sequences: 2, contextSize: 256, maxContextSize: 512 });
    const first = growing.createSequence({ contextSize: 512 });
    const second = growing.createSequence({ contextSize: 512 });
    await first.evaluate(syntheticPrompt(400, 80));
    expect(growing.contextSize).toBe(512);
    await expect(second.evaluate(syntheticPrompt(300, 81))).rejects.toMatchObject({ errorName: 'InsufficientMemory' });
    expect(first.tokens).toHaveLength(400);
    expect(growing.contextSize).toBeLessThanOrEqual(512);
  });

  it('refuses a maxContextSize below contextSize, and one with a per-sequence layout', async () => {
    await expect(engine.createShared({ sequences: 2, contextSize: 512, maxContextSize: 256 })).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(
      engine.createShared({ sequences: 2, contextSize: 512, maxContextSize: 1024, kvLayout: 'perSequence' }),
    ).rejects.toMatchObject({ errorName: 'InvalidArgument' });
  });
});
