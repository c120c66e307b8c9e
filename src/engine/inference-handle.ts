/**
 * What an own context ({@link Context}) and a sequence of a shared context ({@link Sequence}) share: the native
 * handle behind both (one sequence of a native engine), the token mirror, one operation at a time (ContextBusy),
 * abort through an AbortSignal, and the calls of {@link InferenceContext}. The two forms differ only in how they are
 * made, what release frees, and what dispose gives back.
 */
import { constants as bufferConstants } from 'node:buffer';
import { LlamaDialogError } from '../errors.js';
import { callNative, callNativeSync, type NativeContextHandle } from '../native/binding.js';
import { DEFAULT_DRAFT_TOKENS, generateOptionsSchema, parseOptions } from './engine-options.js';
import type { EvaluateResult, GenerateOptions, GenerateResult, InferenceContext } from './types.js';

export abstract class InferenceHandle implements InferenceContext {
  /** Enforced capacity in tokens (prompt + generated). */
  readonly contextSize: number;
  /** @internal The native handle; only the engine layer touches it. */
  protected readonly handle: NativeContextHandle;
  #mirror: Int32Array = new Int32Array(0);
  #inFlight: Promise<unknown> | undefined;
  #disposePromise: Promise<void> | undefined;

  protected constructor(handle: NativeContextHandle) {
    this.handle = handle;
    this.contextSize = handle.contextSize();
  }

  /** Copy of the tokens the KV cache holds (as of the last finished operation). */
  get tokens(): Int32Array {
    return this.#mirror.slice();
  }

  /**
   * KV bytes held now: an own context its whole allocation while the llama_context exists (0 after release), a
   * sequence its cells times the shared context's bytes per cell.
   */
  get kvBytes(): number {
    return this.#disposePromise !== undefined ? 0 : this.handle.kvBytes();
  }

  /** True while an operation runs. */
  get busy(): boolean {
    return this.#inFlight !== undefined;
  }

  get disposed(): boolean {
    return this.#disposePromise !== undefined;
  }

  /**
   * Makes the KV cache hold exactly `tokens`: keeps the longest common prefix with {@link tokens},
   * removes the rest, decodes the new suffix in batches. A prompt equal to the mirror re-decodes its
   * last token (so that logits exist). An empty array clears the cache.
   * @throws LlamaDialogError Aborted (the mirror keeps what was decoded before the abort);
   *   ContextOverflow (longer than contextSize); InvalidToken; ContextBusy; ObjectDisposed.
   */
  evaluate(tokens: Int32Array, options: { signal?: AbortSignal } = {}): Promise<EvaluateResult> {
    return this.run('evaluate', options.signal, () => this.handle.evaluate(tokens));
  }

  /**
   * Evaluates `prompt` as {@link evaluate} does, then samples up to `maxTokens` tokens in C++.
   * Stops on an end-of-generation token (not included, not cached), a stop string (the text is cut
   * before it; only tokens that end before it are kept in the reply and the cache), `maxTokens`,
   * or an abort once generation has started (resolves with stopReason 'aborted' and the partial
   * reply). `onToken` receives text as it becomes final (text that may start a stop string or ends
   * in half a UTF-8 character is held back); if it throws, generation stops and the error is rethrown.
   * Requires prompt.length + maxTokens <= contextSize. With `grammar`, only tokens the GBNF grammar allows
   * are sampled and generation ends (stopReason 'eog') once the grammar is complete. With `profile`, the result
   * carries the decode-loop figures of every step this generation took part in.
   * @throws LlamaDialogError Aborted (during the prompt); ContextOverflow; InvalidToken; InvalidArgument
   *   (also for a grammar llama.cpp cannot parse); ContextBusy; ObjectDisposed.
   */
  async generate(options: GenerateOptions): Promise<GenerateResult> {
    const parsed = parseOptions(generateOptionsSchema, options, 'generate options');
    let callbackError: { error: unknown } | undefined;
    const onToken = options.onToken;
    const onPiece = onToken
      ? (piece: string, token: number) => {
          if (callbackError) return;
          try {
            onToken(piece, token);
          } catch (error) {
            callbackError = { error };
            this.handle.abort();
          }
        }
      : undefined;
    const request = {
      prompt: parsed.prompt,
      maxTokens: parsed.maxTokens,
      sampling: parsed.sampling ?? {},
      stop: parsed.stop ?? [],
      ...(parsed.grammar !== undefined ? { grammar: parsed.grammar } : {}),
      ...(parsed.profile ? { profile: true } : {}),
      draftTokens: parsed.draftTokens ?? DEFAULT_DRAFT_TOKENS,
    };
    const result = await this.run('generate', parsed.signal, () => this.handle.generate(request, onPiece));
    // The listener's own error, unchanged: the caller wrote it.
    if (callbackError) throw callbackError.error;
    return result;
  }

  /**
   * Log-probabilities (natural log, full-vocabulary softmax) of each candidate as the token after `prompt`.
   * @throws LlamaDialogError as {@link evaluate}; InvalidArgument for an empty prompt.
   */
  scoreNext(prompt: Int32Array, candidates: Int32Array, options: { signal?: AbortSignal } = {}): Promise<Float64Array> {
    return this.run('scoreNext', options.signal, () => this.handle.scoreNext(prompt, candidates));
  }

  /**
   * The KV state of the cached tokens (a few bytes of header + llama.cpp's sequence state), for RAM
   * snapshots and save games. Restore it with {@link loadState} and the same {@link tokens}. The header
   * carries a checksum of the payload, so a corrupted copy is refused by {@link loadState}.
   * @throws LlamaDialogError InsufficientMemory when the state is larger than one ArrayBuffer may be
   *   (`buffer.constants.MAX_LENGTH`); ContextBusy; ObjectDisposed.
   */
  saveState(): Promise<Uint8Array> {
    return this.run('saveState', undefined, () => this.handle.saveState(bufferConstants.MAX_LENGTH));
  }

  /**
   * Restores a state from {@link saveState}; afterwards {@link tokens} equals `tokens`. A state saved by an own
   * context loads into a sequence (and the other way round) when the model and KV cache type match and it fits.
   * @throws LlamaDialogError StateMismatch when the bytes come from another model, another KV cache
   *   type, do not fit this context, do not belong to `tokens`, or are corrupted (checksum).
   */
  loadState(bytes: Uint8Array, tokens: Int32Array): Promise<void> {
    return this.run('loadState', undefined, () => this.handle.loadState(bytes, tokens));
  }

  /** Frees this handle's KV memory but keeps its settings; the next call starts from an empty cache. */
  release(): Promise<void> {
    return this.run('release', undefined, () => this.handle.release());
  }

  /** Frees it for good. Async, idempotent; waits for the running operation to finish. */
  dispose(): Promise<void> {
    this.#disposePromise ??= (async () => {
      if (this.#inFlight) await this.#inFlight.catch(() => undefined);
      this.#mirror = new Int32Array(0);
      await callNative(() => this.handle.dispose());
      this.onDisposed();
    })();
    return this.#disposePromise;
  }

  /** Called once the native side has let go (a sequence tells its shared context). */
  protected onDisposed(): void {}

  /** Runs one native operation: refuses after dispose and while another runs, wires the abort signal, refreshes the mirror. */
  protected async run<T>(what: string, signal: AbortSignal | undefined, operation: () => Promise<T>): Promise<T> {
    if (this.#disposePromise !== undefined) {
      throw new LlamaDialogError('ObjectDisposed', `cannot ${what}: the context has been disposed`);
    }
    if (this.#inFlight !== undefined) {
      throw new LlamaDialogError('ContextBusy', `cannot ${what}: another operation is still running on this context`);
    }
    if (signal?.aborted) throw new LlamaDialogError('Aborted', `${what} aborted before it started`);
    const onAbort = () => this.handle.abort();
    const running = callNative(operation);
    this.#inFlight = running;
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await running;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.#inFlight = undefined;
      if (this.#disposePromise === undefined) this.#mirror = callNativeSync(() => this.handle.tokens());
    }
  }
}
