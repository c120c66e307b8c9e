/**
 * An embedding context: one llama_context made for pooled embeddings (BERT-family embedding models, or a decoder
 * model with mean or last pooling). `embed` turns texts into vectors, many texts per llama_decode, one sequence
 * each, as llama.cpp's embedding example does (native/embedder.h). The work runs on the model's compute thread,
 * between the decode steps of its other contexts.
 *
 * Calls queue: one runs at a time, the next starts when it settles, so callers never see ContextBusy. An abort
 * signal stops the call it was given to (the running one, or a queued one before it starts).
 */
import { LlamaDialogError } from '../errors.js';
import { callNative, type NativeEmbeddingContextHandle, type NativePooling } from '../native/binding.js';
import type { Model } from './model.js';

export interface EmbedOptions {
  signal?: AbortSignal;
}

/** What an embedding context has done so far (tests and benchmarks read it). */
export interface EmbeddingContextStats {
  /** embed calls that finished. */
  calls: number;
  /** Texts embedded. */
  texts: number;
  /** llama_decode calls (each holds as many texts as fit one batch). */
  decodes: number;
}

export class EmbeddingContext {
  readonly model: Model;
  /** Floats per vector. */
  readonly dimensions: number;
  /** The most tokens one text may have (with the vocabulary's own special tokens, e.g. BERT's [CLS] … [SEP]). */
  readonly maxTokens: number;
  readonly pooling: NativePooling;
  /** Tokens and texts of one llama_decode. */
  readonly batchSize: number;
  readonly sequences: number;
  /** Vectors come L2-normalised (unit length), so a dot product is their cosine. */
  readonly normalize: boolean;
  /** A text over maxTokens is cut to fit (true) or refused with InputTooLong (false). */
  readonly truncate: boolean;
  readonly #handle: NativeEmbeddingContextHandle;
  readonly #stats: EmbeddingContextStats = { calls: 0, texts: 0, decodes: 0 };
  #tail: Promise<unknown> = Promise.resolve();
  #disposePromise: Promise<void> | undefined;

  /** @internal Use {@link Model.createEmbeddingContext}. */
  constructor(model: Model, handle: NativeEmbeddingContextHandle, options: { normalize: boolean; truncate: boolean }) {
    this.model = model;
    this.#handle = handle;
    const info = handle.info();
    this.dimensions = info.dimensions;
    this.maxTokens = info.maxTokens;
    this.pooling = info.pooling;
    this.batchSize = info.batchSize;
    this.sequences = info.sequences;
    this.normalize = options.normalize;
    this.truncate = options.truncate;
  }

  get stats(): Readonly<EmbeddingContextStats> {
    return { ...this.#stats };
  }

  get disposed(): boolean {
    return this.#disposePromise !== undefined;
  }

  /**
   * The tokens `text` is embedded as: the model's tokenizer with its special tokens (BERT adds [CLS] and [SEP]).
   * @throws LlamaDialogError InvalidArgument for an empty text; InputTooLong over maxTokens unless `truncate`.
   */
  tokensOf(text: string, index = 0): Int32Array {
    if (typeof text !== 'string') {
      throw new LlamaDialogError('InvalidArgument', `text ${index} must be a string, got ${text === null ? 'null' : typeof text}`);
    }
    if (text.length === 0) throw new LlamaDialogError('InvalidArgument', `text ${index} is empty; there is nothing to embed`);
    const tokens = this.model.tokenize(text, { addSpecial: true, parseSpecial: false });
    if (tokens.length === 0) throw new LlamaDialogError('InvalidArgument', `text ${index} tokenizes to nothing`);
    if (tokens.length <= this.maxTokens) return tokens;
    if (!this.truncate) {
      throw new LlamaDialogError(
        'InputTooLong',
        `text ${index} has ${tokens.length} tokens; this embedding context takes at most ${this.maxTokens} (shorten the text, ` +
          'split it into records, or create the context with truncate: true)',
      );
    }
    return this.#truncated(text, tokens);
  }

  /**
   * One vector per text, in order. Texts of any lengths and any order give the same vectors as each embedded alone
   * (within float tolerance): every text is its own sequence.
   * @throws LlamaDialogError InvalidArgument (not an array, an empty text); InputTooLong; Aborted; ObjectDisposed.
   */
  embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (this.#disposePromise !== undefined) {
      return Promise.reject(new LlamaDialogError('ObjectDisposed', 'the embedding context has been disposed'));
    }
    if (!Array.isArray(texts)) {
      return Promise.reject(new LlamaDialogError('InvalidArgument', 'embed expects an array of strings'));
    }
    let tokens: Int32Array[];
    try {
      tokens = texts.map((text, index) => this.tokensOf(text, index));
    } catch (error) {
      return Promise.reject(error);
    }
    const run = this.#tail.then(() => this.#run(tokens, options.signal));
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /**
   * Relevance of each document to `query`, from a reranker (a cross-encoder GGUF that declares rank pooling): one
   * score per document, higher is more relevant. Each pair is one sequence, the query's tokens (with the vocabulary's
   * own [CLS] … [SEP]) followed by the document's, as llama.cpp pairs them for a model without a rerank template;
   * many pairs go into one decode.
   * @throws LlamaDialogError UnsupportedModel when the context does not rank (pooling other than 'rank');
   *   InvalidArgument (empty query or document); InputTooLong for a pair over maxTokens unless `truncate`, which cuts
   *   the document; Aborted; ObjectDisposed.
   */
  rank(query: string, documents: readonly string[], options: EmbedOptions = {}): Promise<number[]> {
    if (this.pooling !== 'rank') {
      return Promise.reject(
        new LlamaDialogError('UnsupportedModel', `rank needs a reranker (a GGUF with rank pooling); this context pools '${this.pooling}'`),
      );
    }
    if (this.#disposePromise !== undefined) {
      return Promise.reject(new LlamaDialogError('ObjectDisposed', 'the embedding context has been disposed'));
    }
    if (!Array.isArray(documents)) return Promise.reject(new LlamaDialogError('InvalidArgument', 'rank expects an array of documents'));
    let pairs: Int32Array[];
    try {
      const head = this.#special(query, 'query');
      pairs = documents.map((document, index) => this.#pair(head, this.#special(document, `document ${index}`), index));
    } catch (error) {
      return Promise.reject(error);
    }
    const run = this.#tail.then(() => this.#run(pairs, options.signal));
    this.#tail = run.catch(() => undefined);
    return run.then((scores) => scores.map((score) => score[0]!));
  }

  /** Frees the context after the calls queued before this one. Idempotent. */
  dispose(): Promise<void> {
    this.#disposePromise ??= (async () => {
      await this.#tail;
      await callNative(() => this.#handle.dispose());
    })();
    return this.#disposePromise;
  }

  /** One native call over token sequences (embed's texts, rank's pairs: a reranker's "vector" is its scores). */
  async #run(tokens: Int32Array[], signal: AbortSignal | undefined): Promise<Float32Array[]> {
    if (signal?.aborted) throw new LlamaDialogError('Aborted', 'embed aborted before it started');
    if (tokens.length === 0) return [];
    const onAbort = () => this.#handle.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { vectors, decodes } = await callNative(() => this.#handle.embed(tokens, this.normalize));
      this.#stats.calls += 1;
      this.#stats.texts += tokens.length;
      this.#stats.decodes += decodes;
      return tokens.map((_, index) => vectors.subarray(index * this.dimensions, (index + 1) * this.dimensions));
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** A text's tokens with the vocabulary's special tokens. */
  #special(text: string, what: string): Int32Array {
    if (typeof text !== 'string' || text.length === 0) throw new LlamaDialogError('InvalidArgument', `the ${what} must be a non-empty string`);
    return this.model.tokenize(text, { addSpecial: true, parseSpecial: false });
  }

  /** Query then document, the document's own leading BOS ([CLS]) left out; cut to maxTokens when truncating. */
  #pair(query: Int32Array, document: Int32Array, index: number): Int32Array {
    const bos = this.model.info.bos;
    const body = document.length > 0 && document[0] === bos ? document.subarray(1) : document;
    const length = query.length + body.length;
    if (length > this.maxTokens && !this.truncate) {
      throw new LlamaDialogError(
        'InputTooLong',
        `query and document ${index} have ${length} tokens together; this context takes at most ${this.maxTokens} (create it with truncate: true to cut the document)`,
      );
    }
    if (query.length >= this.maxTokens) throw new LlamaDialogError('InputTooLong', `the query alone has ${query.length} tokens; the limit is ${this.maxTokens}`);
    const pair = new Int32Array(Math.min(length, this.maxTokens));
    pair.set(query, 0);
    pair.set(body.subarray(0, pair.length - query.length), query.length);
    // A cut document keeps its closing special token ([SEP]) last, as a cut text does.
    if (length > this.maxTokens) pair[pair.length - 1] = body[body.length - 1]!;
    return pair;
  }

  // Keeps the vocabulary's closing special token (BERT's [SEP]) where the model expects it: the first maxTokens − 1
  // tokens, then that token.
  #truncated(text: string, tokens: Int32Array): Int32Array {
    const plain = this.model.tokenize(text, { addSpecial: false, parseSpecial: false });
    const closes = plain.length > 0 && tokens.length > plain.length && tokens[tokens.length - 1] !== plain[plain.length - 1];
    if (!closes) return tokens.slice(0, this.maxTokens);
    const cut = tokens.slice(0, this.maxTokens);
    cut[this.maxTokens - 1] = tokens[tokens.length - 1]!;
    return cut;
  }
}
