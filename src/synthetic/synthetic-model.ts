import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import { readGgufFile, type GgufFile } from '../gguf/gguf-reader.js';
import { GgmlType, type GgufMetadataValue } from '../gguf/gguf-types.js';
import { GgufWriter, type GgufWriteProgress } from '../gguf/gguf-writer.js';
import { chatTemplateForVocabulary, type SyntheticChatTemplateKind } from './synthetic-chat-template.js';
import { SeededRandom } from './synthetic-random.js';
import { constantFloat32Bytes, normalFloat16Table, randomFloat16Chunks } from './synthetic-weights.js';

/**
 * Version of the generator's output. Bump it whenever the same options would produce different bytes,
 * so that cached test models (whose file names carry it) are regenerated.
 */
export const SYNTHETIC_MODEL_VERSION = 1;

/** Shape of a llama-architecture model. */
export interface SyntheticModelShape {
  embeddingSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  feedForwardSize: number;
  /** Trained context length written to the GGUF (tokens). */
  contextLength: number;
  ropeFreqBase: number;
  rmsNormEpsilon: number;
}

/**
 * - `tiny`: for tests; loads and runs in milliseconds. With the 128256-token Llama 3 vocabulary the
 *   embedding table dominates: ~8.3M parameters.
 * - `small`: for benchmarks; SmolLM-135M-like shape, ~180M parameters with the Llama 3 vocabulary.
 * Both tie the output projection to the token embedding (no `output.weight`).
 */
export const SYNTHETIC_PRESETS = {
  tiny: {
    embeddingSize: 64,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    feedForwardSize: 128,
    contextLength: 4096,
    ropeFreqBase: 500000,
    rmsNormEpsilon: 1e-5,
  },
  small: {
    embeddingSize: 576,
    layers: 30,
    heads: 9,
    kvHeads: 3,
    feedForwardSize: 1536,
    contextLength: 8192,
    ropeFreqBase: 500000,
    rmsNormEpsilon: 1e-5,
  },
} as const satisfies Record<string, SyntheticModelShape>;

export type SyntheticPreset = keyof typeof SYNTHETIC_PRESETS;

export interface SyntheticModelOptions {
  /** A llama.cpp vocab-only GGUF (e.g. `models/ggml-vocab-llama-bpe.gguf`) whose tokenizer is copied. */
  vocabPath: string;
  preset: SyntheticPreset;
  /** Output file; written to a temporary file beside it, then renamed, so readers never see half a model. */
  outPath: string;
  /** Weights are a pure function of (seed, preset, vocabulary); default 0. */
  seed?: number;
  /** Called after each written chunk (a few MiB) with the bytes written so far. */
  onProgress?: (progress: GgufWriteProgress) => void;
}

export interface SyntheticModelInfo {
  path: string;
  preset: SyntheticPreset;
  seed: number;
  vocabPath: string;
  architecture: 'llama';
  shape: SyntheticModelShape;
  vocabSize: number;
  parameterCount: number;
  /** Bytes. */
  fileSize: number;
  chatTemplate: string;
  chatTemplateKind: SyntheticChatTemplateKind;
  /** Special token ids as written to the GGUF; -1 when the vocabulary defines none. */
  bos: number;
  eos: number;
  eot: number;
  /** Wall time of the whole call, milliseconds. */
  writeMs: number;
}

/**
 * Writes a llama-architecture GGUF with random float16 weights (deterministic from `seed`; norms are 1,
 * scales keep activations near unit size so logits stay finite) and the tokenizer of a vocab-only GGUF.
 * When the vocabulary has no `tokenizer.chat_template`, one that fits its special tokens is added
 * (see {@link chatTemplateForVocabulary}).
 * @throws LlamaDialogError `InvalidArgument` for an unknown preset, a non-integer seed, a missing output
 *   folder, or a vocabulary file without tokens; `ModelLoadFailed` when the vocabulary file is missing or
 *   not GGUF. Filesystem errors while writing (permissions, disk full) pass through as Node errors.
 */
export async function writeSyntheticModel(options: SyntheticModelOptions): Promise<SyntheticModelInfo> {
  const started = performance.now();
  const { vocabPath, preset, outPath, onProgress } = options;
  const seed = options.seed ?? 0;
  if (!Object.hasOwn(SYNTHETIC_PRESETS, preset)) {
    throw new LlamaDialogError(
      'InvalidArgument',
      `unknown synthetic model preset "${String(preset)}" (expected one of: ${Object.keys(SYNTHETIC_PRESETS).join(', ')})`,
    );
  }
  if (!Number.isSafeInteger(seed)) {
    throw new LlamaDialogError('InvalidArgument', `synthetic model seed must be an integer, got ${seed}`);
  }
  if (!existsSync(dirname(outPath))) {
    throw new LlamaDialogError('InvalidArgument', `cannot write ${outPath}: folder ${dirname(outPath)} does not exist`);
  }
  const shape: SyntheticModelShape = SYNTHETIC_PRESETS[preset];
  const vocab = await readGgufFile(vocabPath);
  const tokenizer = copyTokenizer(vocab, vocabPath);
  const vocabSize = tokenizer.tokens.length;

  const writer = new GgufWriter();
  const headSize = shape.embeddingSize / shape.heads;
  const meta = (key: string, value: GgufMetadataValue): void => void writer.setMetadata(key, value);
  meta('general.architecture', { type: 'string', value: 'llama' });
  meta('general.name', { type: 'string', value: `llama-dialog synthetic ${preset}` });
  meta('general.description', {
    type: 'string',
    value: `Random weights for tests and benchmarks (seed ${seed}, generator v${SYNTHETIC_MODEL_VERSION}); produces no meaningful text.`,
  });
  meta('general.file_type', { type: 'uint32', value: 1 }); // LLAMA_FTYPE_MOSTLY_F16: all matrices f16, 1-D tensors f32
  meta('llama.vocab_size', { type: 'uint32', value: vocabSize });
  meta('llama.context_length', { type: 'uint32', value: shape.contextLength });
  meta('llama.embedding_length', { type: 'uint32', value: shape.embeddingSize });
  meta('llama.block_count', { type: 'uint32', value: shape.layers });
  meta('llama.feed_forward_length', { type: 'uint32', value: shape.feedForwardSize });
  meta('llama.attention.head_count', { type: 'uint32', value: shape.heads });
  meta('llama.attention.head_count_kv', { type: 'uint32', value: shape.kvHeads });
  meta('llama.rope.dimension_count', { type: 'uint32', value: headSize });
  meta('llama.rope.freq_base', { type: 'float32', value: shape.ropeFreqBase });
  meta('llama.attention.layer_norm_rms_epsilon', { type: 'float32', value: shape.rmsNormEpsilon });
  for (const [key, value] of tokenizer.metadata) meta(key, value);

  const parameterCount = addTensors(writer, shape, vocabSize, seed);
  const temporaryPath = `${outPath}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  let fileSize: number;
  try {
    fileSize = await writer.write(temporaryPath, onProgress);
    await rename(temporaryPath, outPath);
  } catch (error) {
    await rm(temporaryPath, { force: true });
    throw error;
  }

  return {
    path: outPath,
    preset,
    seed,
    vocabPath,
    architecture: 'llama',
    shape: { ...shape },
    vocabSize,
    parameterCount,
    fileSize,
    chatTemplate: tokenizer.chatTemplate,
    chatTemplateKind: tokenizer.chatTemplateKind,
    bos: tokenizer.specialId('tokenizer.ggml.bos_token_id'),
    eos: tokenizer.specialId('tokenizer.ggml.eos_token_id'),
    eot: tokenizer.specialId('tokenizer.ggml.eot_token_id'),
    writeMs: performance.now() - started,
  };
}

interface CopiedTokenizer {
  tokens: string[];
  metadata: Map<string, GgufMetadataValue>;
  chatTemplate: string;
  chatTemplateKind: SyntheticChatTemplateKind;
  specialId(key: string): number;
}

/** Every `tokenizer.*` key of the vocabulary, plus a chat template (and its end-of-turn id) if it lacks one. */
function copyTokenizer(vocab: GgufFile, vocabPath: string): CopiedTokenizer {
  const tokensValue = vocab.metadata.get('tokenizer.ggml.tokens');
  if (tokensValue?.type !== 'array' || tokensValue.itemType !== 'string' || tokensValue.value.length === 0) {
    throw new LlamaDialogError('InvalidArgument', `${vocabPath} has no tokenizer.ggml.tokens: not a vocabulary GGUF`);
  }
  const tokens = tokensValue.value;
  const metadata = new Map<string, GgufMetadataValue>();
  for (const [key, value] of vocab.metadata) {
    if (key.startsWith('tokenizer.')) metadata.set(key, value);
  }
  let chatTemplate: string;
  let chatTemplateKind: SyntheticChatTemplateKind;
  const existing = metadata.get('tokenizer.chat_template');
  if (existing?.type === 'string') {
    chatTemplate = existing.value;
    chatTemplateKind = 'vocab';
  } else {
    const chosen = chatTemplateForVocabulary(tokens);
    chatTemplate = chosen.template;
    chatTemplateKind = chosen.kind;
    metadata.set('tokenizer.chat_template', { type: 'string', value: chatTemplate });
    // The template ends each turn with this token; naming it keeps generation stopping there even for
    // readers that do not guess end-of-turn tokens from their text as llama.cpp does.
    const endOfTurn = chosen.kind === 'llama3' ? '<|eot_id|>' : chosen.kind === 'chatml' ? '<|im_end|>' : null;
    if (endOfTurn !== null && !metadata.has('tokenizer.ggml.eot_token_id')) {
      metadata.set('tokenizer.ggml.eot_token_id', { type: 'uint32', value: tokens.indexOf(endOfTurn) });
    }
  }
  const specialId = (key: string): number => {
    const value = metadata.get(key);
    return value !== undefined && typeof value.value === 'number' ? value.value : -1;
  };
  return { tokens, metadata, chatTemplate, chatTemplateKind, specialId };
}

/** Declares all tensors (data produced lazily at write time); returns the parameter count. */
function addTensors(writer: GgufWriter, shape: SyntheticModelShape, vocabSize: number, seed: number): number {
  const { embeddingSize: embd, layers, heads, kvHeads, feedForwardSize: ff } = shape;
  const headSize = embd / heads;
  const kvSize = headSize * kvHeads;
  // Scales: each matrix maps unit-RMS inputs to unit-RMS outputs (std 1/sqrt(fan_in)); the two that
  // write into the residual stream are further divided by sqrt(2·layers) so the stream stays O(1)
  // across depth. The tied embedding gets std 1/sqrt(embd), so logits have unit spread.
  const residualScale = 1 / Math.sqrt(2 * layers);
  const tables = new Map<number, Uint16Array>();
  const tableFor = (std: number): Uint16Array => {
    let table = tables.get(std);
    if (table === undefined) tables.set(std, (table = normalFloat16Table(std, seed)));
    return table;
  };
  let parameterCount = 0;
  let stream = 0;
  const matrix = (name: string, inputs: number, outputs: number, std: number): void => {
    const count = inputs * outputs;
    const tensorStream = ++stream;
    writer.addTensor({
      name,
      dims: [inputs, outputs], // ggml order: row length (the input size) first
      type: GgmlType.F16,
      data: () => randomFloat16Chunks(count, tableFor(std), new SeededRandom(seed, tensorStream)),
    });
    parameterCount += count;
  };
  const norm = (name: string): void => {
    writer.addTensor({ name, dims: [embd], type: GgmlType.F32, data: constantFloat32Bytes(embd, 1) });
    parameterCount += embd;
  };

  matrix('token_embd.weight', embd, vocabSize, 1 / Math.sqrt(embd));
  for (let layer = 0; layer < layers; layer++) {
    const block = `blk.${layer}`;
    norm(`${block}.attn_norm.weight`);
    matrix(`${block}.attn_q.weight`, embd, embd, 1 / Math.sqrt(embd));
    matrix(`${block}.attn_k.weight`, embd, kvSize, 1 / Math.sqrt(embd));
    matrix(`${block}.attn_v.weight`, embd, kvSize, 1 / Math.sqrt(embd));
    matrix(`${block}.attn_output.weight`, embd, embd, residualScale / Math.sqrt(embd));
    norm(`${block}.ffn_norm.weight`);
    matrix(`${block}.ffn_gate.weight`, embd, ff, 1 / Math.sqrt(embd));
    matrix(`${block}.ffn_up.weight`, embd, ff, 1 / Math.sqrt(embd));
    matrix(`${block}.ffn_down.weight`, ff, embd, residualScale / Math.sqrt(ff));
  }
  norm('output_norm.weight');
  return parameterCount;
}
