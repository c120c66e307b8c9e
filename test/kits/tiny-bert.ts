// Hand-built inputs for the converter tests: .safetensors files, zip archives (a wheel is one), and a tiny
// Hugging Face BERT folder with random weights, all written by the test itself.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32, deflateRawSync } from 'node:zlib';
import { seededRandom } from './seeded-random.js';

export interface SafetensorsFixtureTensor {
  name: string;
  dtype: 'F32' | 'F16' | 'BF16' | 'I64';
  shape: number[];
  /** Raw little-endian bytes. */
  data: Uint8Array;
}

/** The bytes of a .safetensors file: 8-byte LE header length, JSON header, tensors back to back in the given order. */
export function safetensorsBytes(tensors: readonly SafetensorsFixtureTensor[], metadata: Record<string, string> = { format: 'pt' }): Buffer {
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  for (const tensor of tensors) {
    header[tensor.name] = { dtype: tensor.dtype, shape: tensor.shape, data_offsets: [offset, offset + tensor.data.byteLength] };
    offset += tensor.data.byteLength;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, ...tensors.map((tensor) => Buffer.from(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength))]);
}

export function float32Bytes(values: ArrayLike<number>): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer);
}

/** A zip archive of `files` (name → bytes), deflated, with a real CRC: what a wheel looks like to a reader. */
export function zipBytes(files: Record<string, Uint8Array | string>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content] of Object.entries(files)) {
    const data = typeof content === 'string' ? Buffer.from(content) : Buffer.from(content);
    const compressed = deflateRawSync(data);
    const nameBytes = Buffer.from(name);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8);
    local.writeUInt32LE(crc32(data), 14);
    local.writeUInt32LE(compressed.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(8, 10);
    central.writeUInt32LE(crc32(data), 16);
    central.writeUInt32LE(compressed.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, compressed);
    centrals.push(central, nameBytes);
    offset += 30 + nameBytes.length + compressed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** The tiny model's shape: 2 layers, 8 dims, 2 heads, 16-wide feed-forward, 16 positions. */
export const TINY_BERT = { layers: 2, hidden: 8, heads: 2, feedForward: 16, positions: 16, typeVocab: 2 } as const;

/** A WordPiece vocabulary with BERT's specials at BERT's ids for the first five roles (0, 100-103 → here 0-4). */
export const TINY_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'cat', 'sat', '##s', '##at', 'on', 'mat', '.', ',', 'a', '##b'];

/** Hugging Face names and PyTorch shapes of the tiny model's tensors, plus the ones the converter must drop. */
export function tinyBertTensorShapes(): [string, number[]][] {
  const { layers, hidden: d, feedForward: ff, positions, typeVocab } = TINY_BERT;
  const shapes: [string, number[]][] = [
    ['embeddings.word_embeddings.weight', [TINY_VOCAB.length, d]],
    ['embeddings.position_embeddings.weight', [positions, d]],
    ['embeddings.token_type_embeddings.weight', [typeVocab, d]],
    ['embeddings.LayerNorm.weight', [d]],
    ['embeddings.LayerNorm.bias', [d]],
  ];
  for (let layer = 0; layer < layers; layer++) {
    const at = (part: string, shape: number[]): void => void shapes.push([`encoder.layer.${layer}.${part}`, shape]);
    for (const part of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
      at(`${part}.weight`, [d, d]);
      at(`${part}.bias`, [d]);
    }
    at('attention.output.LayerNorm.weight', [d]);
    at('attention.output.LayerNorm.bias', [d]);
    at('intermediate.dense.weight', [ff, d]);
    at('intermediate.dense.bias', [ff]);
    at('output.dense.weight', [d, ff]);
    at('output.dense.bias', [d]);
    at('output.LayerNorm.weight', [d]);
    at('output.LayerNorm.bias', [d]);
  }
  shapes.push(['pooler.dense.weight', [d, d]], ['pooler.dense.bias', [d]]);
  return shapes;
}

export interface TinyBertOptions {
  /** Edits applied to config.json. */
  config?: Record<string, unknown>;
  /** Tensors to leave out (Hugging Face names). */
  omit?: string[];
  /** Replacement shapes (Hugging Face names). */
  reshape?: Record<string, number[]>;
  dtype?: 'F32' | 'F16' | 'BF16';
  seed?: number;
}

/** The tensors of the tiny model with random values (F32 unless `dtype` says otherwise), position ids as I64. */
export function tinyBertTensors(options: TinyBertOptions = {}): SafetensorsFixtureTensor[] {
  const random = seededRandom(options.seed ?? 1);
  const tensors: SafetensorsFixtureTensor[] = [{ name: 'embeddings.position_ids', dtype: 'I64', shape: [1, TINY_BERT.positions], data: new Uint8Array(8 * TINY_BERT.positions) }];
  for (const [name, defaultShape] of tinyBertTensorShapes()) {
    if (options.omit?.includes(name)) continue;
    const shape = options.reshape?.[name] ?? defaultShape;
    const count = shape.reduce((product, size) => product * size, 1);
    const values = Float32Array.from({ length: count }, () => (name.includes('LayerNorm.weight') ? 1 : 0) + 0.2 * (random() - 0.5));
    const dtype = options.dtype ?? 'F32';
    let data: Uint8Array;
    if (dtype === 'F32') data = new Uint8Array(values.buffer);
    else {
      const bits = new Uint16Array(count);
      // BF16 is the top half of the float32 (truncated); F16 only needs values that are exact in both, so use BF16's.
      const raw = new Uint32Array(values.buffer);
      for (let i = 0; i < count; i++) bits[i] = raw[i]! >>> 16;
      if (dtype === 'F16') for (let i = 0; i < count; i++) bits[i] = 0x3c00 + (i % 64); // 1.0 … 1.0615: exact in f16
      data = new Uint8Array(bits.buffer);
    }
    tensors.push({ name, dtype, shape, data });
  }
  return tensors;
}

/** Writes a tiny BERT model folder (config.json, vocab.txt, model.safetensors, special_tokens_map.json, 1_Pooling). */
export function writeTinyBertFolder(folder: string, options: TinyBertOptions = {}): void {
  mkdirSync(join(folder, '1_Pooling'), { recursive: true });
  for (const [name, bytes] of Object.entries(tinyBertFiles(options))) writeFileSync(join(folder, name), bytes);
}

/** The files of the tiny model folder, by relative path. */
export function tinyBertFiles(options: TinyBertOptions = {}): Record<string, Uint8Array> {
  const config = {
    architectures: ['BertModel'],
    model_type: 'bert',
    hidden_act: 'gelu',
    hidden_size: TINY_BERT.hidden,
    intermediate_size: TINY_BERT.feedForward,
    num_hidden_layers: TINY_BERT.layers,
    num_attention_heads: TINY_BERT.heads,
    max_position_embeddings: TINY_BERT.positions,
    type_vocab_size: TINY_BERT.typeVocab,
    vocab_size: TINY_VOCAB.length,
    layer_norm_eps: 1e-12,
    ...options.config,
  };
  return {
    'config.json': Buffer.from(JSON.stringify(config)),
    'vocab.txt': Buffer.from(`${TINY_VOCAB.join('\n')}\n`),
    'model.safetensors': safetensorsBytes(tinyBertTensors(options)),
    'special_tokens_map.json': Buffer.from(JSON.stringify({ unk_token: '[UNK]', sep_token: '[SEP]', pad_token: '[PAD]', cls_token: '[CLS]', mask_token: '[MASK]' })),
    '1_Pooling/config.json': Buffer.from(JSON.stringify({ word_embedding_dimension: TINY_BERT.hidden, pooling_mode_mean_tokens: true, pooling_mode_cls_token: false })),
  };
}
