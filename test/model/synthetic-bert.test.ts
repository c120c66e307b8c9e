// The synthetic BERT through llama.cpp: it loads as a 2-layer bert, and llama.cpp's WPM tokenizer on it agrees with
// the reference BertTokenizer of test/kits/reference-bert.ts, which also runs it to finite unit vectors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadModel } from '../../src/engine/load-model.js';
import { GgufWriter } from '../../src/gguf/gguf-writer.js';
import { GgmlType } from '../../src/gguf/gguf-types.js';
import type { Model } from '../../src/engine/model.js';
import { ensureTestBert, ensureTestBertReranker } from '../kits/models.js';
import { cosineSimilarity, loadReferenceBert, type ReferenceBert } from '../kits/reference-bert.js';

let model: Model;
let reference: ReferenceBert;

beforeAll(async () => {
  const path = await ensureTestBert();
  model = await loadModel({ path });
  reference = await loadReferenceBert(path);
});

afterAll(async () => {
  await model?.dispose();
});

describe('synthetic BERT on llama.cpp', () => {
  it('loads as bert with the bge vocabulary and [CLS] as the start token', () => {
    expect(model.info).toMatchObject({ architecture: 'bert', layers: 2, embeddingSize: 128, heads: 4, vocabSize: 30522, bos: 101 });
  });

  it('tokenizes like BertTokenizer (the reference), [CLS] … [SEP] included', () => {
    for (const text of ['The guard waves you through.', "Don't touch the ale!", 'Ünïcödé façade, 42 coins']) {
      expect(Array.from(model.tokenize(text, { addSpecial: true })), text).toEqual(reference.tokenize(text));
    }
  });

  it('the reference forward pass gives finite, unit, text-dependent vectors of the model size', () => {
    const [a, b] = [reference.embed('hello there'), reference.embed('a different line')];
    expect(a).toHaveLength(128);
    expect(a.every(Number.isFinite)).toBe(true);
    expect(Math.hypot(...a)).toBeCloseTo(1, 5);
    expect(Array.from(a)).not.toEqual(Array.from(b));
  });
});

describe('the embedding context on the synthetic BERT (non-causal, no KV cache)', () => {
  const TEXTS = ['The guard waves you through.', 'Hi.', 'Swords cost twelve silver at the smithy, axes eight.', "Don't touch the ale!", 'Wolves.'];

  it('pools by the GGUF (mean) and agrees with the reference forward pass on the same tokens', async () => {
    const context = await model.createEmbeddingContext({ threads: 1 });
    try {
      expect(context).toMatchObject({ pooling: 'mean', dimensions: 128, maxTokens: 512 });
      const vectors = await context.embed(TEXTS);
      for (const [index, text] of TEXTS.entries()) {
        const expected = reference.embedTokens(Array.from(context.tokensOf(text)));
        expect(cosineSimilarity(vectors[index]!, expected), text).toBeGreaterThan(0.9999);
      }
    } finally {
      await context.dispose();
    }
  });

  it('many texts per decode equal each text alone, in any order; a small batch splits the call', async () => {
    await expect(model.createEmbeddingContext({ threads: 1, batchSize: 32, sequences: 3 })).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    await expect(model.createEmbeddingContext({ threads: 1, batchSize: 64, sequences: 128 })).rejects.toMatchObject({ errorName: 'InvalidArgument' });
    const context = await model.createEmbeddingContext({ threads: 1, batchSize: 32, sequences: 4 });
    try {
      expect(context.maxTokens).toBe(32);
      const alone = [];
      for (const text of TEXTS) alone.push((await context.embed([text]))[0]!);
      const decodesBefore = context.stats.decodes;
      const together = await context.embed([...TEXTS].reverse());
      expect(context.stats.decodes - decodesBefore).toBeGreaterThanOrEqual(2);
      for (const [index, vector] of together.entries()) {
        expect(cosineSimilarity(vector, alone[TEXTS.length - 1 - index]!)).toBeGreaterThan(0.99999);
      }
      await expect(context.embed(['word '.repeat(40)])).rejects.toMatchObject({ errorName: 'InputTooLong' });
    } finally {
      await context.dispose();
    }
  });

  it('a generating context is refused on it, clearly', async () => {
    await expect(model.createContext({ contextSize: 128 })).rejects.toMatchObject({ errorName: 'UnsupportedModel' });
  });
});

describe('a BERT llama.cpp would abort on', () => {
  it('f16 token_types.weight is refused at load with ModelLoadFailed (the first decode would abort the process)', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'llama-dialog-bert-'));
    try {
      const path = join(folder, 'f16-token-types.gguf');
      await new GgufWriter()
        .setMetadata('general.architecture', { type: 'string', value: 'bert' })
        .addTensor({ name: 'token_types.weight', dims: [8, 2], type: GgmlType.F16, data: new Uint8Array(32) })
        .write(path);
      await expect(loadModel({ path })).rejects.toMatchObject({ errorName: 'ModelLoadFailed', message: expect.stringMatching(/token_types\.weight is f16/) });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('rank() on the synthetic reranker (rank pooling, a classification head on [CLS])', () => {
  const DOCUMENTS = ['Swords cost twelve silver.', 'The ferry runs at dawn.', 'Wolves hunt near the mill.', 'The curfew bell rings at nine.'];

  it('gives one finite score per document, the same together as alone and in any order', async () => {
    const reranker = await loadModel({ path: await ensureTestBertReranker() });
    const context = await reranker.createEmbeddingContext({ threads: 1 });
    try {
      expect(reranker.info.pooling).toBe('rank');
      expect(context).toMatchObject({ pooling: 'rank', dimensions: 1 });
      const together = await context.rank('How much is a sword?', DOCUMENTS);
      expect(together).toHaveLength(DOCUMENTS.length);
      expect(together.every((score) => Number.isFinite(score))).toBe(true);
      expect(new Set(together.map((score) => score.toFixed(6))).size).toBeGreaterThan(1);
      const reversed = await context.rank('How much is a sword?', [...DOCUMENTS].reverse());
      for (const [index, document] of DOCUMENTS.entries()) {
        const [alone] = await context.rank('How much is a sword?', [document]);
        expect(Math.abs(alone! - together[index]!), document).toBeLessThan(1e-4);
        expect(Math.abs(reversed[DOCUMENTS.length - 1 - index]! - together[index]!)).toBeLessThan(1e-4);
      }
      // The pair is query then document: another query scores the same documents differently.
      const other = await context.rank('When does the ferry leave?', DOCUMENTS);
      expect(other.some((score, index) => Math.abs(score - together[index]!) > 1e-4)).toBe(true);
      await expect(context.rank('query', [''])).rejects.toMatchObject({ errorName: 'InvalidArgument' });
      await expect(context.rank('query', ['word '.repeat(600)])).rejects.toMatchObject({ errorName: 'InputTooLong' });
      expect(await context.rank('query', [])).toEqual([]);
    } finally {
      await context.dispose();
      await reranker.dispose();
    }
  });

  it('an embedding model refuses rank, clearly', async () => {
    const context = await model.createEmbeddingContext({ threads: 1 });
    try {
      await expect(context.rank('query', ['document'])).rejects.toMatchObject({ errorName: 'UnsupportedModel' });
    } finally {
      await context.dispose();
    }
  });
});
