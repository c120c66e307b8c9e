// An independent BERT sentence embedder in plain TypeScript: reads a BERT GGUF (as our converter writes it), tokenizes
// with WordPiece the way Hugging Face's BertTokenizer does, runs the encoder in float64, mean-pools and L2-normalises.
// It shares no code with llama.cpp, so agreeing with it (and with published similarities) checks the conversion.
import { open } from 'node:fs/promises';
import { readGgufFile, type GgufFile } from '../../src/gguf/gguf-reader.js';
import { GgmlType } from '../../src/gguf/gguf-types.js';
import { fromFloat16Bits } from '../../src/util/float16.js';

/** The encoder's hyper-parameters, from the GGUF's bert.* keys. */
export interface ReferenceBertShape {
  layers: number;
  embeddingSize: number;
  heads: number;
  feedForwardSize: number;
  contextLength: number;
  layerNormEpsilon: number;
}

const WORD_START = '\u2581';
const CONTROL = 3;

/** A loaded model: weights as float32 arrays keyed by GGUF tensor name, the vocabulary, the shape. */
export class ReferenceBert {
  private readonly wordStart = new Map<string, number>();
  private readonly continuation = new Map<string, number>();

  constructor(
    readonly shape: ReferenceBertShape,
    private readonly weights: Map<string, Float32Array>,
    tokens: readonly string[],
    tokenTypes: ArrayLike<number>,
    readonly special: { cls: number; sep: number; unk: number },
  ) {
    // The GGUF spells HF's `x` as `▁x` and HF's `##x` as `x`; control tokens keep their text and are never matched.
    tokens.forEach((token, id) => {
      if (tokenTypes[id] === CONTROL) return;
      if (token.startsWith(WORD_START)) this.wordStart.set(token.slice(WORD_START.length), id);
      else this.continuation.set(token, id);
    });
  }

  /** `[CLS] wordpieces [SEP]`, as BertTokenizer (lowercasing, accent stripping, punctuation splitting) would give. */
  tokenize(text: string): number[] {
    const ids = [this.special.cls];
    for (const word of basicTokenize(text)) ids.push(...this.wordPieces(word));
    ids.push(this.special.sep);
    if (ids.length > this.shape.contextLength) throw new Error(`${ids.length} tokens exceed the context length ${this.shape.contextLength}`);
    return ids;
  }

  /** Greedy longest-match-first, as HF WordPiece: a word with an unmatchable rest (or over 100 chars) is one [UNK]. */
  private wordPieces(word: string): number[] {
    const chars = [...word];
    if (chars.length > 100) return [this.special.unk];
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (end > start) {
        const piece = chars.slice(start, end).join('');
        found = start === 0 ? this.wordStart.get(piece) : this.continuation.get(piece);
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) return [this.special.unk];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  /** The sentence embedding of `text`: mean of the last hidden states over all tokens, L2-normalised. */
  embed(text: string): Float32Array {
    return this.embedTokens(this.tokenize(text));
  }

  /** The same for token ids given directly (the lead compares llama.cpp's embeddings of the same ids). */
  embedTokens(ids: readonly number[]): Float32Array {
    const { embeddingSize: d, layers, layerNormEpsilon: eps } = this.shape;
    const n = ids.length;
    const tokenEmbedding = this.tensor('token_embd.weight');
    const positionEmbedding = this.tensor('position_embd.weight');
    const typeEmbedding = this.tensor('token_types.weight');
    let hidden: Float64Array[] = ids.map((id, position) => {
      const row = new Float64Array(d);
      for (let i = 0; i < d; i++) row[i] = tokenEmbedding[id * d + i]! + positionEmbedding[position * d + i]! + typeEmbedding[i]!;
      return layerNorm(row, this.tensor('token_embd_norm.weight'), this.tensor('token_embd_norm.bias'), eps);
    });
    for (let layer = 0; layer < layers; layer++) hidden = this.encoderLayer(layer, hidden);
    const pooled = new Float64Array(d);
    for (const row of hidden) for (let i = 0; i < d; i++) pooled[i] = pooled[i]! + row[i]! / n;
    const norm = Math.sqrt(pooled.reduce((sum, value) => sum + value * value, 0));
    return Float32Array.from(pooled, (value) => value / norm);
  }

  private encoderLayer(layer: number, hidden: Float64Array[]): Float64Array[] {
    const { embeddingSize: d, heads, layerNormEpsilon: eps } = this.shape;
    const headSize = d / heads;
    const w = (name: string): Float32Array => this.tensor(`blk.${layer}.${name}`);
    const q = hidden.map((row) => linear(row, w('attn_q.weight'), w('attn_q.bias')));
    const k = hidden.map((row) => linear(row, w('attn_k.weight'), w('attn_k.bias')));
    const v = hidden.map((row) => linear(row, w('attn_v.weight'), w('attn_v.bias')));
    const scale = 1 / Math.sqrt(headSize);
    const attended = hidden.map((_, query) => {
      const out = new Float64Array(d);
      for (let head = 0; head < heads; head++) {
        const base = head * headSize;
        const scores = k.map((key) => {
          let dot = 0;
          for (let i = 0; i < headSize; i++) dot += q[query]![base + i]! * key[base + i]!;
          return dot * scale;
        });
        const max = Math.max(...scores);
        const exps = scores.map((score) => Math.exp(score - max));
        const total = exps.reduce((sum, value) => sum + value, 0);
        exps.forEach((weight, key) => {
          for (let i = 0; i < headSize; i++) out[base + i] = out[base + i]! + (weight / total) * v[key]![base + i]!;
        });
      }
      return out;
    });
    const afterAttention = hidden.map((row, t) =>
      layerNorm(add(row, linear(attended[t]!, w('attn_output.weight'), w('attn_output.bias'))), w('attn_output_norm.weight'), w('attn_output_norm.bias'), eps),
    );
    return afterAttention.map((row) => {
      const up = linear(row, w('ffn_up.weight'), w('ffn_up.bias')).map(gelu);
      return layerNorm(add(row, linear(up, w('ffn_down.weight'), w('ffn_down.bias'))), w('layer_output_norm.weight'), w('layer_output_norm.bias'), eps);
    });
  }

  private tensor(name: string): Float32Array {
    const tensor = this.weights.get(name);
    if (tensor === undefined) throw new Error(`the GGUF has no tensor ${name}`);
    return tensor;
  }
}

/** y = W x + b, W stored as ggml [in, out]: `out` rows of `in` contiguous values (PyTorch's [out, in]). */
function linear(x: Float64Array, weight: Float32Array, bias: Float32Array): Float64Array {
  const inputs = x.length;
  const out = new Float64Array(bias.length);
  for (let o = 0; o < out.length; o++) {
    let sum = bias[o]!;
    const row = o * inputs;
    for (let i = 0; i < inputs; i++) sum += weight[row + i]! * x[i]!;
    out[o] = sum;
  }
  return out;
}

function add(a: Float64Array, b: Float64Array): Float64Array {
  return a.map((value, i) => value + b[i]!);
}

function layerNorm(x: Float64Array, weight: Float32Array, bias: Float32Array, eps: number): Float64Array {
  const mean = x.reduce((sum, value) => sum + value, 0) / x.length;
  const variance = x.reduce((sum, value) => sum + (value - mean) ** 2, 0) / x.length;
  const scale = 1 / Math.sqrt(variance + eps);
  return x.map((value, i) => (value - mean) * scale * weight[i]! + bias[i]!);
}

/** BERT's exact GELU, x·Φ(x), with erf from Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, far below the checks' 1e-3). */
function gelu(x: number): number {
  return 0.5 * x * (1 + erf(x / Math.SQRT2));
}

function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign * (1 - poly * Math.exp(-a * a));
}

/** HF BasicTokenizer for an uncased model: clean, split CJK, lowercase, strip accents, split on whitespace and punctuation. */
export function basicTokenize(text: string): string[] {
  let cleaned = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (code === 0 || code === 0xfffd || (/[\p{Cc}\p{Cf}]/u.test(char) && !/[\t\n\r]/.test(char))) continue;
    if (/\s/u.test(char)) cleaned += ' ';
    else if (isCjk(code)) cleaned += ` ${char} `;
    else cleaned += char;
  }
  const words: string[] = [];
  for (const raw of cleaned.split(' ')) {
    if (raw === '') continue;
    const word = raw.toLowerCase().normalize('NFD').replace(/\p{Mn}/gu, '');
    let current = '';
    for (const char of word) {
      if (isPunctuation(char)) {
        if (current !== '') words.push(current);
        words.push(char);
        current = '';
      } else current += char;
    }
    if (current !== '') words.push(current);
  }
  return words;
}

function isPunctuation(char: string): boolean {
  const code = char.codePointAt(0)!;
  // BERT counts every non-alphanumeric ASCII symbol ($, +, ^, `) as punctuation, not only Unicode's P categories.
  if ((code >= 33 && code <= 47) || (code >= 58 && code <= 64) || (code >= 91 && code <= 96) || (code >= 123 && code <= 126)) return true;
  return /\p{P}/u.test(char);
}

function isCjk(code: number): boolean {
  return (
    (code >= 0x4e00 && code <= 0x9fff) || (code >= 0x3400 && code <= 0x4dbf) || (code >= 0x20000 && code <= 0x2a6df) ||
    (code >= 0x2a700 && code <= 0x2b73f) || (code >= 0x2b740 && code <= 0x2b81f) || (code >= 0x2b820 && code <= 0x2ceaf) ||
    (code >= 0xf900 && code <= 0xfaff) || (code >= 0x2f800 && code <= 0x2fa1f)
  );
}

function numberKey(file: GgufFile, key: string): number {
  const entry = file.metadata.get(key);
  if (entry === undefined || typeof entry.value !== 'number') throw new Error(`the GGUF has no numeric ${key}`);
  return entry.value;
}

/** Reads a BERT GGUF (f32 or f16 tensors) into a {@link ReferenceBert}. */
export async function loadReferenceBert(ggufPath: string): Promise<ReferenceBert> {
  const file = await readGgufFile(ggufPath);
  const architecture = file.metadata.get('general.architecture')?.value;
  if (architecture !== 'bert') throw new Error(`${ggufPath} is ${String(architecture)}, not bert`);
  const shape: ReferenceBertShape = {
    layers: numberKey(file, 'bert.block_count'),
    embeddingSize: numberKey(file, 'bert.embedding_length'),
    heads: numberKey(file, 'bert.attention.head_count'),
    feedForwardSize: numberKey(file, 'bert.feed_forward_length'),
    contextLength: numberKey(file, 'bert.context_length'),
    layerNormEpsilon: numberKey(file, 'bert.attention.layer_norm_epsilon'),
  };
  const weights = new Map<string, Float32Array>();
  const handle = await open(ggufPath, 'r');
  try {
    for (const tensor of file.tensors) {
      const bytes = Buffer.alloc(tensor.byteSize);
      await handle.read(bytes, 0, tensor.byteSize, file.dataOffset + tensor.offset);
      if (tensor.type === GgmlType.F32) weights.set(tensor.name, new Float32Array(bytes.buffer, bytes.byteOffset, tensor.byteSize / 4).slice());
      else if (tensor.type === GgmlType.F16) weights.set(tensor.name, Float32Array.from({ length: tensor.byteSize / 2 }, (_, i) => fromFloat16Bits(bytes.readUInt16LE(2 * i))));
      else throw new Error(`tensor ${tensor.name} has ggml type ${tensor.type}; the reference reads f32 and f16 only`);
    }
  } finally {
    await handle.close();
  }
  const tokens = file.metadata.get('tokenizer.ggml.tokens')!.value as string[];
  const tokenTypes = file.metadata.get('tokenizer.ggml.token_type')!.value as Int32Array;
  return new ReferenceBert(shape, weights, tokens, tokenTypes, {
    cls: numberKey(file, 'tokenizer.ggml.cls_token_id'),
    sep: numberKey(file, 'tokenizer.ggml.seperator_token_id'),
    unk: numberKey(file, 'tokenizer.ggml.unknown_token_id'),
  });
}

/**
 * Reference sentence embeddings (L2-normalised, mean-pooled) of `texts` under the BERT GGUF at `ggufPath`:
 * what llama.cpp's embeddings of the same model should equal to within float error.
 */
export async function referenceEmbed(ggufPath: string, texts: readonly string[]): Promise<Float32Array[]> {
  const model = await loadReferenceBert(ggufPath);
  return texts.map((text) => model.embed(text));
}

/** Cosine similarity (a dot product for L2-normalised vectors, computed in float64). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}
