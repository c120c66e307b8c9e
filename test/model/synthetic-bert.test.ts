// The synthetic BERT through llama.cpp: it loads as a 2-layer bert, and llama.cpp's WPM tokenizer on it agrees with
// the reference BertTokenizer of test/kits/reference-bert.ts, which also runs it to finite unit vectors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { ensureTestBert } from '../kits/models.js';
import { loadReferenceBert, type ReferenceBert } from '../kits/reference-bert.js';

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
