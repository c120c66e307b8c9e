// The synthetic BERT of the fast tiers: llama.cpp's bge WordPiece tokenizer copied exactly, the bert hparams, every
// tensor llama.cpp's BERT loader asks for in the requested shape, deterministic bytes; bad options are typed errors.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { readGgufFile } from '../../../src/gguf/gguf-reader.js';
import { GgmlType } from '../../../src/gguf/gguf-types.js';
import { SYNTHETIC_BERT_TINY, writeSyntheticBert, type SyntheticBertOptions } from '../../../src/synthetic/synthetic-bert.js';
import { vocabPath } from '../../helpers/llama-cpp.js';

const dir = mkdtempSync(join(tmpdir(), 'synthetic-bert-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function refusal(options: SyntheticBertOptions): Promise<string> {
  try {
    await writeSyntheticBert(options);
  } catch (error) {
    if (isLlamaDialogError(error)) return `${error.errorName}: ${error.message}`;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('writeSyntheticBert', () => {
  it('writes a bert GGUF with the bge tokenizer, mean pooling and every BERT tensor, f16 matrices, f32 vectors', async () => {
    const outPath = join(dir, 'bert.gguf');
    const info = await writeSyntheticBert({ vocabPath: vocabPath('bert-bge'), outPath, seed: 3 });
    expect(info.vocabSize).toBe(30522);
    const gguf = await readGgufFile(outPath);
    const vocab = await readGgufFile(vocabPath('bert-bge'));
    const value = (key: string): unknown => gguf.metadata.get(key)?.value;
    expect(value('general.architecture')).toBe('bert');
    expect([value('bert.block_count'), value('bert.embedding_length'), value('bert.attention.head_count'), value('bert.feed_forward_length')]).toEqual([2, 128, 4, 256]);
    expect(value('bert.pooling_type')).toBe(1);
    expect(value('bert.attention.causal')).toBe(false);
    for (const [key, entry] of vocab.metadata) {
      if (!key.startsWith('tokenizer.')) continue;
      const copied = gguf.metadata.get(key)!;
      expect(copied.type, key).toBe(entry.type);
      if (Array.isArray(entry.value)) expect((copied.value as string[]).join('\0'), key).toBe(entry.value.join('\0'));
      else if (ArrayBuffer.isView(entry.value)) expect(Buffer.from((copied.value as Int32Array).buffer).equals(Buffer.from(entry.value.buffer)), key).toBe(true);
      else expect(copied.value, key).toEqual(entry.value);
    }
    expect(gguf.tensors).toHaveLength(5 + 2 * 16);
    const tensors = new Map(gguf.tensors.map((tensor) => [tensor.name, tensor]));
    expect(tensors.get('token_embd.weight')).toMatchObject({ dims: [128, 30522], type: GgmlType.F16 });
    expect(tensors.get('position_embd.weight')).toMatchObject({ dims: [128, 512], type: GgmlType.F16 });
    expect(tensors.get('token_types.weight')).toMatchObject({ dims: [128, 2] });
    expect(tensors.get('blk.1.ffn_down.weight')).toMatchObject({ dims: [256, 128], type: GgmlType.F16 });
    expect(tensors.get('blk.1.layer_output_norm.bias')).toMatchObject({ dims: [128], type: GgmlType.F32 });
    expect(info.parameterCount).toBe(gguf.tensors.reduce((sum, tensor) => sum + tensor.dims.reduce((a, b) => a * b, 1), 0));
  });

  it('the same seed gives the same bytes, another seed other weights', async () => {
    const paths = ['a', 'b', 'c'].map((name) => join(dir, `${name}.gguf`));
    await writeSyntheticBert({ vocabPath: vocabPath('bert-bge'), outPath: paths[0]!, seed: 1, shape: { ...SYNTHETIC_BERT_TINY, layers: 1 } });
    await writeSyntheticBert({ vocabPath: vocabPath('bert-bge'), outPath: paths[1]!, seed: 1, shape: { ...SYNTHETIC_BERT_TINY, layers: 1 } });
    await writeSyntheticBert({ vocabPath: vocabPath('bert-bge'), outPath: paths[2]!, seed: 2, shape: { ...SYNTHETIC_BERT_TINY, layers: 1 } });
    const [a, b, c] = paths.map((path) => readFileSync(path));
    expect(a!.equals(b!)).toBe(true);
    expect(a!.length).toBe(c!.length);
    expect(a!.equals(c!)).toBe(false);
  });

  it('refuses a non-BERT vocabulary, a bad shape or seed, a missing folder', async () => {
    expect(await refusal({ vocabPath: vocabPath('llama-bpe'), outPath: join(dir, 'x.gguf') })).toMatch(/^InvalidArgument: .* is not a BERT \(WordPiece\) vocabulary/);
    expect(await refusal({ vocabPath: vocabPath('bert-bge'), outPath: join(dir, 'x.gguf'), shape: { ...SYNTHETIC_BERT_TINY, heads: 3 } })).toMatch(/not a multiple of heads 3/);
    expect(await refusal({ vocabPath: vocabPath('bert-bge'), outPath: join(dir, 'x.gguf'), shape: { ...SYNTHETIC_BERT_TINY, layers: 0 } })).toMatch(/layers must be a positive integer/);
    expect(await refusal({ vocabPath: vocabPath('bert-bge'), outPath: join(dir, 'x.gguf'), seed: 0.5 })).toMatch(/seed must be an integer/);
    expect(await refusal({ vocabPath: vocabPath('bert-bge'), outPath: join(dir, 'no', 'x.gguf') })).toMatch(/folder .* does not exist/);
  });
});
