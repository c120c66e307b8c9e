import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import { readGgufFile } from '../gguf/gguf-reader.js';
import { GgmlType, type GgufMetadataValue } from '../gguf/gguf-types.js';
import { GgufWriter, type GgufWriteProgress } from '../gguf/gguf-writer.js';
import { SeededRandom } from './synthetic-random.js';
import { constantFloat32Bytes, normalFloat16Table, randomFloat16Chunks } from './synthetic-weights.js';

/**
 * Version of the synthetic BERT's bytes. Bump it whenever the same options would produce different bytes, so cached
 * test models (whose file names carry it) are regenerated.
 */
export const SYNTHETIC_BERT_VERSION = 2;

/** Shape of a synthetic BERT encoder. */
export interface SyntheticBertShape {
  embeddingSize: number;
  layers: number;
  heads: number;
  feedForwardSize: number;
  /** Positions (the position embedding's rows) and the trained context length. */
  contextLength: number;
}

/** The fast tiers' embedder: 2 layers of 128 dims; with the 30522-token bge vocabulary, ~4.3M parameters (~9 MB). */
export const SYNTHETIC_BERT_TINY: SyntheticBertShape = { embeddingSize: 128, layers: 2, heads: 4, feedForwardSize: 256, contextLength: 512 };

export interface SyntheticBertOptions {
  /** A llama.cpp BERT vocab-only GGUF (`models/ggml-vocab-bert-bge.gguf`) whose WordPiece tokenizer is copied. */
  vocabPath: string;
  /** Written to a temporary file beside it, then renamed. */
  outPath: string;
  /** Weights are a pure function of (seed, shape, vocabulary); default 0. */
  seed?: number;
  shape?: SyntheticBertShape;
  /**
   * A reranker instead of an embedder: rank pooling (`bert.pooling_type` 4) and a classification head on [CLS]
   * (`cls.weight`/`cls.bias`, then `cls.output.weight`/`cls.output.bias` to one score), as a cross-encoder GGUF has.
   */
  reranker?: boolean;
  onProgress?: (progress: GgufWriteProgress) => void;
}

export interface SyntheticBertInfo {
  path: string;
  shape: SyntheticBertShape;
  vocabSize: number;
  parameterCount: number;
  fileSize: number;
}

/**
 * Writes a BERT GGUF (mean pooling, non-causal) with random float16 matrices, unit LayerNorms, zero biases and the
 * WordPiece tokenizer of a vocab-only GGUF: an embedder llama.cpp loads and runs, whose vectors mean nothing.
 * @throws LlamaDialogError `InvalidArgument` for a shape whose size is not a multiple of its heads, a non-integer
 *   seed, a missing output folder, or a vocabulary that is not a BERT (WPM) one; `ModelLoadFailed` when the
 *   vocabulary file is missing or not GGUF.
 */
export async function writeSyntheticBert(options: SyntheticBertOptions): Promise<SyntheticBertInfo> {
  const shape = options.shape ?? SYNTHETIC_BERT_TINY;
  const seed = options.seed ?? 0;
  if (!Number.isSafeInteger(seed)) throw new LlamaDialogError('InvalidArgument', `synthetic BERT seed must be an integer, got ${seed}`);
  for (const [key, size] of Object.entries(shape)) {
    if (!Number.isInteger(size) || size <= 0) throw new LlamaDialogError('InvalidArgument', `synthetic BERT ${key} must be a positive integer, got ${size}`);
  }
  if (shape.embeddingSize % shape.heads !== 0) {
    throw new LlamaDialogError('InvalidArgument', `synthetic BERT embeddingSize ${shape.embeddingSize} is not a multiple of heads ${shape.heads}`);
  }
  if (!existsSync(dirname(options.outPath))) {
    throw new LlamaDialogError('InvalidArgument', `cannot write ${options.outPath}: folder ${dirname(options.outPath)} does not exist`);
  }
  const vocab = await readGgufFile(options.vocabPath);
  const tokens = vocab.metadata.get('tokenizer.ggml.tokens');
  if (vocab.metadata.get('tokenizer.ggml.model')?.value !== 'bert' || tokens?.type !== 'array' || tokens.value.length === 0) {
    throw new LlamaDialogError('InvalidArgument', `${options.vocabPath} is not a BERT (WordPiece) vocabulary GGUF (tokenizer.ggml.model must be "bert")`);
  }
  const vocabSize = tokens.value.length;
  const typeCount = vocab.metadata.get('tokenizer.ggml.token_type_count')?.value;
  const tokenTypes = typeof typeCount === 'number' && typeCount > 0 ? typeCount : 2;

  const writer = new GgufWriter();
  const u32 = (value: number): GgufMetadataValue => ({ type: 'uint32', value });
  writer
    .setMetadata('general.architecture', { type: 'string', value: 'bert' })
    .setMetadata('general.name', { type: 'string', value: options.reranker ? 'llama-dialog synthetic bert reranker' : 'llama-dialog synthetic bert' })
    .setMetadata('general.description', { type: 'string', value: `Random weights for tests (seed ${seed}, generator v${SYNTHETIC_BERT_VERSION}); its embeddings mean nothing.` })
    .setMetadata('general.file_type', u32(1))
    .setMetadata('bert.context_length', u32(shape.contextLength))
    .setMetadata('bert.embedding_length', u32(shape.embeddingSize))
    .setMetadata('bert.feed_forward_length', u32(shape.feedForwardSize))
    .setMetadata('bert.block_count', u32(shape.layers))
    .setMetadata('bert.attention.head_count', u32(shape.heads))
    .setMetadata('bert.attention.layer_norm_epsilon', { type: 'float32', value: 1e-12 })
    .setMetadata('bert.attention.causal', { type: 'bool', value: false })
    .setMetadata('bert.pooling_type', u32(options.reranker ? 4 : 1))
    .setMetadata('tokenizer.ggml.token_type_count', u32(tokenTypes));
  for (const [key, value] of vocab.metadata) {
    if (key.startsWith('tokenizer.') && key !== 'tokenizer.ggml.token_type_count') writer.setMetadata(key, value);
  }

  const { embeddingSize: d, feedForwardSize: ff } = shape;
  let parameterCount = 0;
  let stream = 0;
  const tables = new Map<number, Uint16Array>();
  const tableFor = (std: number): Uint16Array => {
    let table = tables.get(std);
    if (table === undefined) tables.set(std, (table = normalFloat16Table(std, seed)));
    return table;
  };
  const matrix = (name: string, inputs: number, outputs: number, std: number): void => {
    const count = inputs * outputs;
    const tensorStream = ++stream;
    writer.addTensor({ name, dims: [inputs, outputs], type: GgmlType.F16, data: () => randomFloat16Chunks(count, tableFor(std), new SeededRandom(seed, tensorStream)) });
    parameterCount += count;
  };
  // f32 where llama.cpp reads the tensor straight into an add (token_types: its CPU add takes no f16 operand there).
  const float32Matrix = (name: string, inputs: number, outputs: number, std: number): void => {
    const random = new SeededRandom(seed, ++stream);
    const values = Float32Array.from({ length: inputs * outputs }, () => random.nextNormal() * std);
    writer.addTensor({ name, dims: [inputs, outputs], type: GgmlType.F32, data: new Uint8Array(values.buffer) });
    parameterCount += values.length;
  };
  const vector = (name: string, size: number, value: number): void => {
    writer.addTensor({ name, dims: [size], type: GgmlType.F32, data: constantFloat32Bytes(size, value) });
    parameterCount += size;
  };
  // Embeddings of unit spread, matrices of std 1/sqrt(fan-in): LayerNorm keeps every activation finite anyway.
  matrix('token_embd.weight', d, vocabSize, 1);
  matrix('position_embd.weight', d, shape.contextLength, 1);
  float32Matrix('token_types.weight', d, tokenTypes, 1);
  vector('token_embd_norm.weight', d, 1);
  vector('token_embd_norm.bias', d, 0);
  for (let layer = 0; layer < shape.layers; layer++) {
    const block = `blk.${layer}`;
    for (const stem of ['attn_q', 'attn_k', 'attn_v', 'attn_output']) {
      matrix(`${block}.${stem}.weight`, d, d, 1 / Math.sqrt(d));
      vector(`${block}.${stem}.bias`, d, 0);
    }
    vector(`${block}.attn_output_norm.weight`, d, 1);
    vector(`${block}.attn_output_norm.bias`, d, 0);
    matrix(`${block}.ffn_up.weight`, d, ff, 1 / Math.sqrt(d));
    vector(`${block}.ffn_up.bias`, ff, 0);
    matrix(`${block}.ffn_down.weight`, ff, d, 1 / Math.sqrt(ff));
    vector(`${block}.ffn_down.bias`, d, 0);
    vector(`${block}.layer_output_norm.weight`, d, 1);
    vector(`${block}.layer_output_norm.bias`, d, 0);
  }
  if (options.reranker) {
    // llama.cpp's rank head: tanh(cls · [CLS] + b), then cls.output to n_cls_out (1) scores.
    float32Matrix('cls.weight', d, d, 1 / Math.sqrt(d));
    vector('cls.bias', d, 0);
    float32Matrix('cls.output.weight', d, 1, 1 / Math.sqrt(d));
    vector('cls.output.bias', 1, 0);
  }

  const temporaryPath = `${options.outPath}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let fileSize: number;
  try {
    fileSize = await writer.write(temporaryPath, options.onProgress);
    await rename(temporaryPath, options.outPath);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }
  return { path: options.outPath, shape: { ...shape }, vocabSize, parameterCount, fileSize };
}
