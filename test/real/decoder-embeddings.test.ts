// The embedding context on a real decoder model: SmolLM2 with mean pooling (it declares no pooling of its own, so it
// must be asked for). What a batch of many texts must not change: each text is its own sequence, so its vector equals
// the one it gets alone, whatever else shares the decode and in whatever order. The BERT path (MiniLM, non-causal) has
// its own file, test/real/minilm-embeddings.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../src/errors.js';
import type { EmbeddingContext } from '../../src/engine/embedding-context.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { cosineSimilarity } from '../kits/reference-bert.js';
import { REAL_TEST_THREADS, realModelPath } from './real-model-kit.js';

const TEXTS = [
  'The blacksmith sells swords.',
  'Curfew starts at the ninth bell, and the guards close the north gate soon after.',
  'Hi.',
  'The river ferry costs two copper coins and runs from dawn until the evening fog rolls over the water.',
  'Mira keeps the tavern.',
  'Wolves were seen near the old mill.',
];

let model: Model;
let context: EmbeddingContext;


function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

beforeAll(async () => {
  model = await loadModel({ path: await realModelPath('smollm2') });
  context = await model.createEmbeddingContext({ pooling: 'mean', threads: REAL_TEST_THREADS, batchSize: 256, sequences: 16 });
});

afterAll(async () => {
  await context?.dispose();
  await model?.dispose();
});

describe('embeddings on SmolLM2 (mean pooling)', () => {
  it('reports its shape: the model width, mean pooling, a unit-length vector per text', async () => {
    expect(model.info.pooling).toBe('none');
    expect(context.dimensions).toBe(model.info.embeddingOutputSize);
    expect(context.pooling).toBe('mean');
    expect(context.maxTokens).toBe(256);
    const [vector] = await context.embed(['Hello there.']);
    expect(vector).toHaveLength(context.dimensions);
    let norm = 0;
    for (const value of vector!) norm += value * value;
    expect(Math.sqrt(norm)).toBeCloseTo(1, 5);
  });

  it('many texts in one call equal each text alone, in any order and mix of lengths', async () => {
    const alone: Float32Array[] = [];
    for (const text of TEXTS) alone.push((await context.embed([text]))[0]!);
    const before = context.stats.decodes;
    const together = await context.embed(TEXTS);
    expect(context.stats.decodes - before).toBe(1); // six short texts fit one batch of 256 tokens
    const reversed = await context.embed([...TEXTS].reverse());
    for (const [index, vector] of together.entries()) {
      expect(maxAbsDifference(vector, alone[index]!), TEXTS[index]).toBeLessThan(2e-3);
      expect(cosineSimilarity(vector, alone[index]!)).toBeGreaterThan(0.9999);
      expect(maxAbsDifference(reversed[TEXTS.length - 1 - index]!, vector)).toBeLessThan(2e-3);
    }
  });

  it('splits a call over several decodes when the texts outgrow one batch, and the vectors stay the same', async () => {
    const many = Array.from({ length: 40 }, (_, i) => `${TEXTS[i % TEXTS.length]} (${i})`);
    const before = context.stats.decodes;
    const vectors = await context.embed(many);
    expect(context.stats.decodes - before).toBeGreaterThanOrEqual(3); // 40 texts, 16 sequences per decode
    const [lastAlone] = await context.embed([many[39]!]);
    expect(maxAbsDifference(vectors[39]!, lastAlone!)).toBeLessThan(2e-3);
  });

  it('refuses a text over maxTokens with InputTooLong, or cuts it with truncate', async () => {
    const long = 'the old mill by the river '.repeat(80);
    await expect(context.embed(['short', long])).rejects.toMatchObject({ errorName: 'InputTooLong' });
    const cutting = await model.createEmbeddingContext({ pooling: 'mean', threads: REAL_TEST_THREADS, contextSize: 32, truncate: true });
    try {
      expect(cutting.maxTokens).toBe(32);
      const [vector] = await cutting.embed([long]);
      expect(vector).toHaveLength(cutting.dimensions);
    } finally {
      await cutting.dispose();
    }
  });

  it('an abort stops a long call with Aborted, and the context goes on working', async () => {
    const [reference] = await context.embed([TEXTS[0]!]);
    const many = Array.from({ length: 2000 }, (_, i) => `${TEXTS[i % TEXTS.length]} ${i}`);
    const controller = new AbortController();
    const running = context.embed(many, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toMatchObject({ errorName: 'Aborted' });
    const aborted = new AbortController();
    aborted.abort();
    await expect(context.embed(['x'], { signal: aborted.signal })).rejects.toMatchObject({ errorName: 'Aborted' });
    const [again] = await context.embed([TEXTS[0]!]);
    expect(maxAbsDifference(again!, reference!)).toBeLessThan(1e-5);
  });

  it('a text-generation model without a pooling choice is refused clearly; bad input is typed', async () => {
    await expect(model.createEmbeddingContext()).rejects.toMatchObject({ errorName: 'UnsupportedModel' });
    await expect(model.createEmbeddingContext({ pooling: 'rank' as never })).rejects.toBeInstanceOf(LlamaDialogError);
    await expect(model.createEmbeddingContext({ sequences: 300 })).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(context.embed([''])).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(context.embed('text' as never)).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    expect(await context.embed([])).toEqual([]);
  });

  it('refuses calls after dispose', async () => {
    const other = await model.createEmbeddingContext({ pooling: 'last', threads: REAL_TEST_THREADS });
    expect(other.pooling).toBe('last');
    await other.dispose();
    await expect(other.embed(['x'])).rejects.toMatchObject({ errorName: 'ObjectDisposed' });
  });
});
