/** A loaded GGUF model: exact tokenizer plus a factory of inference contexts. */
import { availableParallelism } from 'node:os';
import { LlamaDialogError } from '../errors.js';
import { callNative, callNativeSync, type NativeModelHandle } from '../native/binding.js';
import { Context } from './context.js';
import { contextOptionsSchema, embeddingContextOptionsSchema, parseOptions, sharedContextOptionsSchema } from './engine-options.js';
import { EmbeddingContext } from './embedding-context.js';
import { SharedContext } from './shared-context.js';
import type { KvCacheType, ModelInfo, SharedContextOptions, SwaCacheKind, TokenizeOptions, Tokenizer } from './types.js';

export interface CreateContextOptions {
  /** KV cache size in tokens; 0 = the model's trained context size. */
  contextSize: number;
  /** Tokens per llama_decode call (n_batch = n_ubatch). Default 512. */
  batchSize?: number;
  /** CPU threads for prompt and generation. Default min(4, available cores). */
  threads?: number;
  /** KV cache precision. Default 'f16'; quantized types need flash attention. */
  kvCacheType?: KvCacheType;
  /** Default 'auto' (llama.cpp enables it where the backend supports it). */
  flashAttention?: boolean | 'auto';
  /**
   * KV cache of a sliding-window model's window layers (see {@link SwaCacheKind}). Default 'full': every cached
   * position stays, so trims and summaries keep reusing the prefix. No effect on models without sliding windows.
   */
  swaCache?: SwaCacheKind;
}

export interface CreateEmbeddingContextOptions {
  /** The most tokens one text may have; default the model's trained context, capped at batchSize. */
  contextSize?: number;
  /** Tokens per llama_decode (n_batch = n_ubatch). Default 512. A text must fit one batch. */
  batchSize?: number;
  /** Texts per llama_decode (n_seq_max): must divide batchSize. Default: the largest divisor of batchSize up to 64. */
  sequences?: number;
  /** CPU threads. Default min(4, available cores). */
  threads?: number;
  /** 'model' (default): the pooling the GGUF declares. A text-generation model declares none: pass 'mean' or 'last'. */
  pooling?: 'model' | 'mean' | 'cls' | 'last';
  /** L2-normalise every vector (default true), so a dot product is the cosine. */
  normalize?: boolean;
  /** Cut a text longer than contextSize to fit instead of refusing it with InputTooLong (default false). */
  truncate?: boolean;
}

/** Texts per decode when not given: the largest divisor of batchSize up to 64 (llama.cpp splits a batch evenly). */
function defaultEmbeddingSequences(batchSize: number): number {
  for (let sequences = Math.min(64, batchSize); sequences > 1; sequences--) if (batchSize % sequences === 0) return sequences;
  return 1;
}

/** Default CPU threads: llama.cpp's own default (4), fewer on smaller machines. */
export function defaultThreadCount(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

export class Model implements Tokenizer {
  /** Facts from the GGUF metadata. */
  readonly info: ModelInfo;
  /** Absolute path of the GGUF file. */
  readonly path: string;
  readonly #handle: NativeModelHandle;
  readonly #pending = new Set<Promise<unknown>>();
  #disposePromise: Promise<void> | undefined;

  /** @internal Use {@link loadModel}. */
  constructor(handle: NativeModelHandle, path: string) {
    this.#handle = handle;
    this.path = path;
    const { addBos: _addBos, ...info } = handle.info();
    this.info = Object.freeze(info);
  }

  /** True once {@link dispose} was called. */
  get disposed(): boolean {
    return this.#disposePromise !== undefined;
  }

  /**
   * The model's own tokenizer (llama_tokenize), exact.
   * @throws LlamaDialogError ObjectDisposed after dispose; InvalidArgument when `text` is not a string or
   *   llama.cpp cannot tokenize it (e.g. an SPM vocabulary without byte tokens meets a character it cannot
   *   spell); UnsupportedModel when the vocabulary has no tokenizer (type none).
   */
  tokenize(text: string, options: TokenizeOptions = {}): Int32Array {
    this.#assertAlive();
    const { addSpecial = false, parseSpecial = false } = optionsObject(options, 'tokenize');
    return callNativeSync(() => this.#handle.tokenize(text, addSpecial, parseSpecial));
  }

  /**
   * Text of `tokens` (special tokens rendered only with `renderSpecial`, default false).
   * @throws LlamaDialogError InvalidToken for an id outside the vocabulary; InvalidArgument for more than
   *   268,435,453 tokens at once; UnsupportedModel without a tokenizer; ObjectDisposed after dispose.
   */
  detokenize(tokens: Int32Array, options: { renderSpecial?: boolean } = {}): string {
    this.#assertAlive();
    const { renderSpecial = false } = optionsObject(options, 'detokenize');
    return callNativeSync(() => this.#handle.detokenize(tokens, renderSpecial));
  }

  /**
   * Text of one token. A piece may hold part of a UTF-8 character (then it contains U+FFFD);
   * detokenize whole sequences for display.
   * @throws LlamaDialogError InvalidToken; ObjectDisposed.
   */
  tokenToPiece(token: number, options: { renderSpecial?: boolean } = {}): string {
    this.#assertAlive();
    return callNativeSync(() => this.#handle.tokenToPiece(token, options.renderSpecial ?? false));
  }

  /**
   * True for end-of-generation tokens (EOS, EOT and the like).
   * @throws LlamaDialogError InvalidToken; ObjectDisposed.
   */
  isEndOfGeneration(token: number): boolean {
    this.#assertAlive();
    return callNativeSync(() => this.#handle.isEog(token));
  }

  /**
   * Creates an inference context (its KV cache is allocated off the JS thread). The context keeps
   * the model's weights alive even after the model is disposed.
   * @throws LlamaDialogError InvalidArgument for bad options; VocabOnlyModel for a vocab-only model;
   *   UnsupportedModel for a model that cannot generate text (encoder-only or encoder-decoder, non-causal
   *   attention, pooled embeddings, no KV cache) or has no tokenizer; InsufficientMemory when the estimated
   *   KV cache (layers × contextSize × 2 × KV width × bytes per element) exceeds 90 % of the memory
   *   available now (Linux MemAvailable, plus free GPU memory), checked before anything is allocated;
   *   ObjectDisposed after dispose; InferenceFailed when llama.cpp cannot allocate the context.
   */
  async createContext(options: CreateContextOptions): Promise<Context> {
    this.#assertAlive();
    const parsed = parseOptions(contextOptionsSchema, options, 'createContext options');
    if (this.info.vocabOnly) {
      throw new LlamaDialogError('VocabOnlyModel', 'the model was loaded with vocabOnly: true; it has no weights to run');
    }
    const settings = {
      contextSize: parsed.contextSize,
      batchSize: parsed.batchSize ?? 512,
      threads: parsed.threads ?? defaultThreadCount(),
      kvCacheType: parsed.kvCacheType ?? 'f16',
      flashAttention: parsed.flashAttention === undefined || parsed.flashAttention === 'auto'
        ? ('auto' as const)
        : parsed.flashAttention ? ('on' as const) : ('off' as const),
      swaCache: parsed.swaCache ?? 'full',
    };
    const creation = callNative(() => this.#handle.createContext(settings));
    this.#pending.add(creation);
    try {
      return new Context(this, await creation, settings);
    } finally {
      this.#pending.delete(creation);
    }
  }

  /**
   * Creates a model-wide shared context: one llama_context with `sequences` sequence ids over `contextSize` KV cells,
   * one cache they all share or one stream each (`kvLayout`, see {@link KvLayout}) (SPEC §2.4). With
   * `maxContextSize` (unified only) the cache starts at `contextSize` cells and grows when a step finds no room, up to
   * `maxContextSize`, and shrinks back when sequences leave (native/engine.h). Its sequences ({@link SharedContext.createSequence}) have the API of a
   * {@link Context}; their decode work is batched together, one llama_decode per step.
   * @throws LlamaDialogError as {@link createContext} (InsufficientMemory is checked for the whole cache).
   */
  async createSharedContext(options: SharedContextOptions): Promise<SharedContext> {
    this.#assertAlive();
    const parsed = parseOptions(sharedContextOptionsSchema, options, 'createSharedContext options');
    if (this.info.vocabOnly) {
      throw new LlamaDialogError('VocabOnlyModel', 'the model was loaded with vocabOnly: true; it has no weights to run');
    }
    const settings = {
      sequences: parsed.sequences,
      contextSize: parsed.contextSize,
      batchSize: parsed.batchSize ?? 512,
      threads: parsed.threads ?? defaultThreadCount(),
      kvCacheType: parsed.kvCacheType ?? 'f16',
      flashAttention: 'auto' as const,
      // Sequences copy prefixes from one another, which needs every position of the source in the window layers.
      swaCache: 'full' as const,
      kvLayout: parsed.kvLayout ?? 'unified',
      ...(parsed.maxContextSize === undefined ? {} : { maxContextSize: parsed.maxContextSize }),
    };
    const creation = callNative(() => this.#handle.createSharedContext(settings));
    this.#pending.add(creation);
    try {
      return new SharedContext(this, await creation);
    } finally {
      this.#pending.delete(creation);
    }
  }

  /**
   * Creates an embedding context (native/embedder.h): pooled vectors of texts, many texts per llama_decode.
   * @throws LlamaDialogError InvalidArgument for bad options; VocabOnlyModel; UnsupportedModel for a model that declares
   *   no pooling when `pooling` is 'model' (a text-generation model: pass 'mean' or 'last'), an encoder-decoder model
   *   or one without a tokenizer; ObjectDisposed; InferenceFailed when llama.cpp cannot create the context.
   */
  async createEmbeddingContext(options: CreateEmbeddingContextOptions = {}): Promise<EmbeddingContext> {
    this.#assertAlive();
    const parsed = parseOptions(embeddingContextOptionsSchema, options, 'createEmbeddingContext options');
    if (this.info.vocabOnly) {
      throw new LlamaDialogError('VocabOnlyModel', 'the model was loaded with vocabOnly: true; it has no weights to run');
    }
    const pooling = parsed.pooling ?? 'model';
    if (pooling === 'model' && this.info.pooling === 'none') {
      throw new LlamaDialogError(
        'UnsupportedModel',
        `${this.info.architecture} model declares no pooling, so it is not an embedding model; pass pooling 'mean' or 'last' to embed with it anyway`,
      );
    }
    // A `sequences` that does not divide the batch is refused by the addon (native/embedder.cpp), before llama.cpp.
    const batchSize = parsed.batchSize ?? 512;
    const settings = {
      contextSize: parsed.contextSize ?? 0,
      batchSize,
      sequences: parsed.sequences ?? defaultEmbeddingSequences(batchSize),
      threads: parsed.threads ?? defaultThreadCount(),
      pooling,
    };
    const creation = callNative(() => this.#handle.createEmbeddingContext(settings));
    this.#pending.add(creation);
    try {
      return new EmbeddingContext(this, await creation, { normalize: parsed.normalize ?? true, truncate: parsed.truncate ?? false });
    } finally {
      this.#pending.delete(creation);
    }
  }

  /**
   * Releases the model. Async, idempotent; waits for contexts being created. Contexts already
   * created keep working until they are disposed themselves.
   */
  dispose(): Promise<void> {
    this.#disposePromise ??= (async () => {
      await Promise.allSettled([...this.#pending]);
      await callNative(() => this.#handle.dispose());
    })();
    return this.#disposePromise;
  }

  #assertAlive(): void {
    if (this.#disposePromise !== undefined) throw new LlamaDialogError('ObjectDisposed', 'the model has been disposed');
  }
}

// Options read outside callNativeSync: a JS TypeError there would be reported as InferenceFailed.
function optionsObject<T extends object>(options: T | null | undefined, method: string): Partial<T> {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object') {
    throw new LlamaDialogError('InvalidArgument', `${method}: options must be an object, got ${options === null ? 'null' : typeof options}`);
  }
  return options;
}
