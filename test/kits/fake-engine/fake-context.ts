import { LlamaDialogError } from '../../../src/errors.js';
import type {
  EvaluateResult,
  GenerateOptions,
  GenerateResult,
  InferenceContext,
  StopReason,
} from '../../../src/engine/types.js';
import { HashedLanguage, type FakeLanguage } from './fake-language.js';
import { KvMirror } from './kv-mirror.js';

/** One call a fake context received, with its prompt, for tests that check what a node asked for. */
export interface FakeContextCall {
  kind: 'evaluate' | 'generate' | 'scoreNext';
  prompt: Int32Array;
  /** The grammar a generate was asked to follow (the fake records it but does not enforce it). */
  grammar?: string;
}

export interface FakeContextOptions {
  /** Capacity in tokens (prompt + generated), as the real context enforces it. */
  contextSize: number;
  /** Tokens decoded per step of a prompt; an abort lands between steps. Default 512, at most contextSize, as in the engine. */
  batchSize?: number;
  language?: FakeLanguage;
  /** Awaited before each generated token; lets a test hold a generation at a chosen token (and abort it there). */
  beforeToken?: (index: number) => Promise<void> | void;
  /** KV bytes one cell takes, for `kvBytes` (default 64). */
  kvBytesPerCell?: number;
  /**
   * What `kvBytes` counts: `allocation` (default, an own context: the whole cache from creation until release) or
   * `cells` (a sequence of a shared context: the cells its tokens occupy).
   */
  kvAccounting?: 'allocation' | 'cells';
  /** Told each time this context's KV memory grows (an allocation, or cells added), after it grew. */
  onKvGrowth?: () => void;
  /** Told of each evaluate / generate / scoreNext once its arguments passed the engine's checks. */
  observe?: (call: FakeContextCall) => void;
}

const STATE_MAGIC = 'llama-dialog fake KV state v1';

/**
 * The test kit's one stand-in for the engine's `Context` (src/engine/context.ts): the same KV mirror and reuse rule,
 * the same refusals with the same error codes (an over-long prompt, prompt + maxTokens over the context, token ids
 * outside the vocabulary, a second operation while one runs, use after dispose), the same stop reasons and abort
 * behaviour. test/contract runs one case list against this class and the real context so that the two cannot drift.
 * What it "generates" comes from a {@link FakeLanguage}, or from {@link queueReply}.
 */
export class FakeContext implements InferenceContext {
  readonly contextSize: number;
  readonly language: FakeLanguage;
  /** Every prompt evaluation (by evaluate, generate or scoreNext), oldest first. */
  readonly evaluations: EvaluateResult[] = [];
  readonly #batchSize: number;
  readonly #mirror = new KvMirror();
  readonly #queued: Int32Array[] = [];
  readonly #beforeToken: FakeContextOptions['beforeToken'];
  readonly #observe: FakeContextOptions['observe'];
  /** What `tokens` shows: like the real context, the mirror as of the last finished operation. */
  #published: Int32Array = new Int32Array(0);
  #inFlight: Promise<unknown> | undefined;
  #promptInFlight: Int32Array | undefined;
  #disposePromise: Promise<void> | undefined;
  readonly #kvBytesPerCell: number;
  /** Like the real context: the whole KV allocation exists from creation until release, and again after any call. */
  #allocated = true;
  readonly #kvAccounting: 'allocation' | 'cells';
  readonly #onKvGrowth: (() => void) | undefined;

  constructor(options: FakeContextOptions) {
    if (!Number.isInteger(options.contextSize) || options.contextSize < 1) {
      throw new LlamaDialogError('InvalidArgument', `contextSize must be a positive integer, got ${options.contextSize}`);
    }
    this.contextSize = options.contextSize;
    this.#batchSize = Math.max(1, Math.min(options.batchSize ?? 512, this.contextSize));
    this.language = options.language ?? new HashedLanguage();
    this.#beforeToken = options.beforeToken;
    this.#observe = options.observe;
    this.#kvBytesPerCell = options.kvBytesPerCell ?? 64;
    this.#kvAccounting = options.kvAccounting ?? 'allocation';
    this.#onKvGrowth = options.onKvGrowth;
  }

  get kvBytes(): number {
    if (this.#disposePromise !== undefined) return 0;
    if (this.#kvAccounting === 'cells') return this.#mirror.length * this.#kvBytesPerCell;
    return this.#allocated ? this.contextSize * this.#kvBytesPerCell : 0;
  }

  /** KV cells its tokens occupy now (the live mirror, not the published one). */
  get cellsHeld(): number {
    return this.#disposePromise !== undefined ? 0 : this.#mirror.length;
  }

  get tokens(): Int32Array {
    return this.#published.slice();
  }

  get busy(): boolean {
    return this.#inFlight !== undefined;
  }

  get disposed(): boolean {
    return this.#disposePromise !== undefined;
  }

  /** The next generate samples exactly `tokens`, then end-of-generation (instead of asking the language). */
  queueReply(tokens: Int32Array): void {
    this.#queued.push(tokens.slice());
  }

  evaluate(tokens: Int32Array, options: { signal?: AbortSignal } = {}): Promise<EvaluateResult> {
    return this.#run('evaluate', options.signal, async () => {
      this.#checkTokens(tokens, 'tokens');
      this.#checkFits(tokens.length);
      this.#observe?.({ kind: 'evaluate', prompt: tokens.slice() });
      return this.#prefill(tokens, options.signal);
    });
  }

  async generate(options: GenerateOptions): Promise<GenerateResult> {
    // Checked before anything else, as the engine's zod schema does.
    if (!(options.prompt instanceof Int32Array)) throw invalid('prompt must be an Int32Array of token ids');
    if (!Number.isInteger(options.maxTokens) || options.maxTokens < 1) throw invalid(`maxTokens must be an integer >= 1, got ${options.maxTokens}`);
    const stops = options.stop ?? [];
    if (stops.some((stop) => stop.length === 0)) throw invalid('stop strings must not be empty');
    const { prompt, maxTokens, signal } = options;
    let listenerError: { error: unknown } | undefined;
    const result = await this.#run('generate', signal, async () => {
      this.#checkTokens(prompt, 'prompt');
      if (prompt.length === 0) throw invalid('generate needs a prompt of at least one token');
      if (prompt.length + maxTokens > this.contextSize) {
        throw new LlamaDialogError(
          'ContextOverflow',
          `the prompt has ${prompt.length} tokens and maxTokens is ${maxTokens}, but the context holds ${this.contextSize}`,
        );
      }
      this.#observe?.({ kind: 'generate', prompt: prompt.slice(), ...(options.grammar === undefined ? {} : { grammar: options.grammar }) });
      const evaluated = await this.#prefill(prompt, signal);
      const source = (this.#queued.shift() ?? this.language.continuation(prompt, options.sampling ?? {}))[Symbol.iterator]();
      const generated: number[] = [];
      const textEnds: number[] = [];
      let text = '';
      let streamed = 0;
      let stopReason: StopReason = 'eog';
      for (;;) {
        if (generated.length >= maxTokens) {
          stopReason = 'maxTokens';
          break;
        }
        await this.#beforeToken?.(generated.length);
        // The engine's order: maxTokens, then abort, then sampling (which may pick end-of-generation).
        if (signal?.aborted === true || listenerError !== undefined) {
          stopReason = 'aborted';
          break;
        }
        const next = source.next();
        if (next.done === true) break;
        const token = next.value;
        generated.push(token);
        this.#mirror.append([token]);
        this.#grewCells();
        text = this.language.detokenize(Int32Array.from(generated));
        textEnds.push(text.length);
        const hit = firstStop(text, stops, textEnds.length > 1 ? (textEnds.at(-2) as number) : 0);
        if (hit !== undefined) {
          // As the engine: keep only the tokens that end before the stop string, in the reply and in the cache.
          const kept = textEnds.filter((end) => end <= hit).length;
          this.#mirror.trimTo(prompt.length + kept);
          generated.length = kept;
          text = text.slice(0, hit);
          stopReason = 'stopString';
          break;
        }
        const releasable = text.length - stopPrefixTail(text, stops);
        if (options.onToken !== undefined && releasable > streamed) {
          listenerError = emit(options.onToken, text.slice(streamed, releasable), token) ?? listenerError;
          streamed = releasable;
        }
      }
      if (options.onToken !== undefined && listenerError === undefined && text.length > streamed) {
        listenerError = emit(options.onToken, text.slice(streamed), generated.at(-1) ?? -1);
      }
      const tokens = Int32Array.from(generated);
      return {
        text,
        tokens,
        stopReason,
        timings: {
          promptReused: evaluated.reused,
          promptEvaluated: evaluated.evaluated,
          promptMs: 0,
          firstTokenMs: 0,
          generateMs: 0,
          tokensGenerated: tokens.length,
        },
      } satisfies GenerateResult;
    });
    // The listener's own error, unchanged, as the engine rethrows it.
    if (listenerError !== undefined) throw listenerError.error;
    return result;
  }

  scoreNext(prompt: Int32Array, candidates: Int32Array, options: { signal?: AbortSignal } = {}): Promise<Float64Array> {
    return this.#run('scoreNext', options.signal, async () => {
      this.#checkTokens(prompt, 'prompt');
      this.#checkTokens(candidates, 'candidates');
      if (prompt.length === 0) throw invalid('scoreNext needs a prompt of at least one token');
      this.#checkFits(prompt.length);
      this.#observe?.({ kind: 'scoreNext', prompt: prompt.slice() });
      await this.#prefill(prompt, options.signal);
      return this.language.scoreNext(prompt, candidates);
    });
  }

  /** A state bound to this language and to the cached tokens, refused elsewhere as the engine refuses it. */
  saveState(): Promise<Uint8Array> {
    return this.#run('saveState', undefined, async () => {
      const header = { magic: STATE_MAGIC, fingerprint: this.language.fingerprint, tokens: Array.from(this.#mirror.tokens) };
      return new TextEncoder().encode(JSON.stringify(header));
    });
  }

  loadState(bytes: Uint8Array, tokens: Int32Array): Promise<void> {
    return this.#run('loadState', undefined, async () => {
      if (!(bytes instanceof Uint8Array)) throw invalid('bytes must be a Uint8Array');
      this.#checkTokens(tokens, 'tokens');
      const saved = parseState(bytes);
      if (saved.fingerprint !== this.language.fingerprint) throw mismatch('the state was saved from a different model');
      if (saved.tokens.length > this.contextSize) {
        throw mismatch(`the state holds ${saved.tokens.length} tokens but this context holds only ${this.contextSize}`);
      }
      if (saved.tokens.length !== tokens.length || saved.tokens.some((token, index) => token !== tokens[index])) {
        throw mismatch(`the tokens passed do not match the state (it holds ${saved.tokens.length} tokens)`);
      }
      this.#mirror.replace(tokens);
      this.#grewCells();
    });
  }

  /**
   * For a subclass (a fake sequence's prefix copy): makes the cache hold exactly `tokens` without decoding them, as one
   * operation of this context (refused while another runs or after dispose).
   */
  /** What the cache holds this moment, even mid-operation (the engine's view between two steps). */
  protected get liveTokens(): Int32Array {
    return this.#mirror.tokens;
  }

  /** The prompt the running operation is decoding now, if it is in its prompt phase. */
  protected get promptInFlight(): Int32Array | undefined {
    return this.#promptInFlight;
  }

  protected adoptTokens(what: string, tokens: Int32Array): Promise<void> {
    return this.#run(what, undefined, async () => {
      this.#mirror.replace(tokens);
      this.#grewCells();
    });
  }

  /** Empties the cache; the context stays usable. */
  release(): Promise<void> {
    return this.#run('release', undefined, async () => {
      this.#mirror.clear();
      this.#allocated = false;
    });
  }

  /** Async, idempotent; waits for the running operation. */
  dispose(): Promise<void> {
    this.#disposePromise ??= (async () => {
      if (this.#inFlight !== undefined) await this.#inFlight.catch(() => undefined);
      this.#mirror.clear();
      this.#published = new Int32Array(0);
    })();
    return this.#disposePromise;
  }

  async #run<T>(what: string, signal: AbortSignal | undefined, operation: () => Promise<T>): Promise<T> {
    if (this.#disposePromise !== undefined) throw new LlamaDialogError('ObjectDisposed', `cannot ${what}: the context has been disposed`);
    if (this.#inFlight !== undefined) {
      throw new LlamaDialogError('ContextBusy', `cannot ${what}: another operation is still running on this context`);
    }
    if (signal?.aborted === true) throw new LlamaDialogError('Aborted', `${what} aborted before it started`);
    if (what !== 'release' && !this.#allocated) {
      this.#allocated = true;
      if (this.#kvAccounting === 'allocation') this.#onKvGrowth?.();
    }
    const running = operation();
    this.#inFlight = running;
    try {
      return await running;
    } finally {
      this.#inFlight = undefined;
      if (this.#disposePromise === undefined) this.#published = this.#mirror.tokens;
    }
  }

  /** The engine's Evaluate: keep the reusable prefix, decode the rest batch by batch, stop between batches on abort. */
  async #prefill(prompt: Int32Array, signal: AbortSignal | undefined): Promise<EvaluateResult> {
    const reused = this.#mirror.reusablePrefix(prompt);
    this.#mirror.trimTo(reused);
    this.#promptInFlight = prompt;
    try {
      await this.#decodePrompt(prompt, reused, signal);
    } finally {
      this.#promptInFlight = undefined;
    }
    const result = { reused, evaluated: prompt.length - reused, ms: 0 };
    this.evaluations.push(result);
    return result;
  }

  async #decodePrompt(prompt: Int32Array, reused: number, signal: AbortSignal | undefined): Promise<void> {
    for (let start = reused; start < prompt.length; start += this.#batchSize) {
      // A real decode runs on another thread and ends in a later event-loop turn: yielding one turn per batch keeps
      // the context busy across the caller's awaits and lets an abort land between batches, as on the engine.
      await new Promise((resolve) => setImmediate(resolve));
      if (signal?.aborted === true) {
        throw new LlamaDialogError('Aborted', `evaluation aborted; the context keeps ${this.#mirror.length} of the ${prompt.length} prompt tokens`);
      }
      this.#mirror.append(prompt.subarray(start, Math.min(prompt.length, start + this.#batchSize)));
      this.#grewCells();
    }
  }

  #grewCells(): void {
    if (this.#kvAccounting === 'cells') this.#onKvGrowth?.();
  }

  #checkTokens(tokens: unknown, what: string): asserts tokens is Int32Array {
    if (!(tokens instanceof Int32Array)) throw invalid(`${what} must be an Int32Array of token ids`);
    const vocabSize = this.language.vocabSize;
    tokens.forEach((token, index) => {
      if (token < 0 || token >= vocabSize) {
        throw new LlamaDialogError('InvalidToken', `${what}[${index}] = ${token} is not a token id (vocabulary size ${vocabSize})`);
      }
    });
  }

  #checkFits(length: number): void {
    if (length > this.contextSize) {
      throw new LlamaDialogError('ContextOverflow', `the prompt has ${length} tokens but the context holds ${this.contextSize}`);
    }
  }
}

function invalid(message: string): LlamaDialogError {
  return new LlamaDialogError('InvalidArgument', message);
}

function mismatch(message: string): LlamaDialogError {
  return new LlamaDialogError('StateMismatch', message);
}

function parseState(bytes: Uint8Array): { fingerprint: string; tokens: number[] } {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(bytes)) as { magic?: unknown; fingerprint?: unknown; tokens?: unknown };
    if (parsed.magic === STATE_MAGIC && typeof parsed.fingerprint === 'string' && Array.isArray(parsed.tokens)) {
      return { fingerprint: parsed.fingerprint, tokens: parsed.tokens as number[] };
    }
  } catch {
    // Not JSON: reported below as not a state, like any other foreign bytes.
  }
  throw mismatch(`not a saved context state (${bytes.length} bytes)`);
}

/** Where the first stop string starts in `text`, looking only where the newest token could have completed one. */
function firstStop(text: string, stops: readonly string[], newTextFrom: number): number | undefined {
  let hit: number | undefined;
  const longest = Math.max(0, ...stops.map((stop) => stop.length));
  const from = Math.max(0, newTextFrom - (longest - 1));
  for (const stop of stops) {
    const at = text.indexOf(stop, from);
    if (at >= 0 && (hit === undefined || at < hit)) hit = at;
  }
  return hit;
}

/** Length of the longest end of `text` that could still grow into a stop string: held back from the stream. */
function stopPrefixTail(text: string, stops: readonly string[]): number {
  let tail = 0;
  for (const stop of stops) {
    for (let length = Math.min(stop.length - 1, text.length); length > tail; length--) {
      if (text.endsWith(stop.slice(0, length))) {
        tail = length;
        break;
      }
    }
  }
  return tail;
}

/** Calls the listener; its error stops the generation like an abort and is rethrown afterwards. */
function emit(onToken: (piece: string, token: number) => void, piece: string, token: number): { error: unknown } | undefined {
  try {
    onToken(piece, token);
    return undefined;
  } catch (error) {
    return { error };
  }
}
