// The embedding context on a real BERT (our conversion of all-MiniLM-L6-v2): a non-causal model without a KV cache,
// mean pooling from its GGUF. Compared with an independent implementation: the TypeScript forward pass of
// test/kits/reference-bert.ts (fed the very token ids llama.cpp tokenized), and the similarities sentence-transformers
// publishes for the model (its quickstart, https://sbert.net: 0.6660, 0.1046, 0.1411).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddingContext } from '../../src/engine/embedding-context.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { cosineSimilarity, loadReferenceBert, type ReferenceBert } from '../kits/reference-bert.js';
import { REAL_TEST_THREADS, realModelPath } from './real-model-kit.js';

const SENTENCES = ['The weather is lovely today.', "It's so sunny outside!", 'He drove to the stadium.'];
const LORE = [
  'The blacksmith Brann sells swords for twelve silver each.',
  'How much does a blade cost at the smithy?',
  'The curfew bell rings at nine, and the north gate closes.',
  'When do the guards shut the gates at night?',
  'Wolves hunt near the old mill after dark.',
  'Is it safe to walk by the mill at night?',
];

let model: Model;
let context: EmbeddingContext;
let reference: ReferenceBert;

beforeAll(async () => {
  const path = await realModelPath('minilm');
  model = await loadModel({ path });
  context = await model.createEmbeddingContext({ threads: REAL_TEST_THREADS });
  reference = await loadReferenceBert(path);
});

afterAll(async () => {
  await context?.dispose();
  await model?.dispose();
});

describe('embeddings on all-MiniLM-L6-v2', () => {
  it('is an embedding model with mean pooling and 384 dimensions', () => {
    expect(model.info.architecture).toBe('bert');
    expect(model.info.pooling).toBe('mean');
    expect(context.pooling).toBe('mean');
    expect(context.dimensions).toBe(384);
    expect(context.maxTokens).toBe(512);
  });

  it('llama.cpp and the reference forward pass give the same vectors (cosine > 0.9999)', async () => {
    const texts = [...SENTENCES, ...LORE];
    const vectors = await context.embed(texts);
    let lowest = 1;
    for (const [index, text] of texts.entries()) {
      const tokens = Array.from(context.tokensOf(text));
      const expected = reference.embedTokens(tokens);
      lowest = Math.min(lowest, cosineSimilarity(vectors[index]!, expected));
    }
    expect(lowest).toBeGreaterThan(0.9999);
  });

  it('reproduces the similarities sentence-transformers publishes for the model, to 1e-3', async () => {
    const [weather, sunny, stadium] = await context.embed(SENTENCES);
    expect(cosineSimilarity(weather!, sunny!)).toBeCloseTo(0.666, 2);
    expect(Math.abs(cosineSimilarity(weather!, sunny!) - 0.666)).toBeLessThan(1e-3);
    expect(Math.abs(cosineSimilarity(weather!, stadium!) - 0.1046)).toBeLessThan(1e-3);
    expect(Math.abs(cosineSimilarity(sunny!, stadium!) - 0.1411)).toBeLessThan(1e-3);
  });

  it('ranks each player question nearest to the lore line that answers it', async () => {
    const vectors = await context.embed(LORE);
    for (let question = 1; question < LORE.length; question += 2) {
      const similarities = LORE.map((_, line) => (line % 2 === 0 ? cosineSimilarity(vectors[question]!, vectors[line]!) : -Infinity));
      expect(similarities.indexOf(Math.max(...similarities)), LORE[question]).toBe(question - 1);
    }
  });

  it('many texts in one decode equal each text alone (non-causal batches, mixed lengths and order)', async () => {
    const texts = [...LORE, ...SENTENCES].reverse();
    const together = await context.embed(texts);
    for (const [index, text] of texts.entries()) {
      const [alone] = await context.embed([text]);
      expect(cosineSimilarity(together[index]!, alone!), text).toBeGreaterThan(0.99999);
    }
  });

  it('refuses a text over 512 tokens with InputTooLong before it reaches llama.cpp', async () => {
    await expect(context.embed(['word '.repeat(600)])).rejects.toMatchObject({ errorName: 'InputTooLong' });
    const [vector] = await context.embed(['still works']);
    expect(vector).toHaveLength(384);
  });
});
