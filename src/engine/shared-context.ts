/**
 * A model-wide llama_context with `sequences` sequence ids over one KV cache or one stream each (SPEC §2.4). Many agents on
 * one model each get a {@link Sequence}; the model's compute thread gathers the pending work of all of them into one
 * llama_decode per step (continuous batching).
 */
import { LlamaDialogError } from '../errors.js';
import { callNative, callNativeSync, type NativeSharedContextHandle } from '../native/binding.js';
import type { Model } from './model.js';
import { Sequence } from './sequence.js';
import type { KvLayout, SharedInferenceContext, SwaCacheKind } from './types.js';

export class SharedContext implements SharedInferenceContext {
  /** The model it runs (kept alive by the shared context). */
  readonly model: Model;
  readonly sequences: number;
  readonly maxContextSize: number;
  readonly kvLayout: KvLayout;
  readonly sequenceContextSize: number;
  readonly kvBytesPerCell: number;
  /** Always `full`: a shared-prefix spawn copies every position of its source (see {@link SwaCacheKind}). */
  readonly swaCache: SwaCacheKind = 'full';
  readonly #handle: NativeSharedContextHandle;
  readonly #live = new Set<Sequence>();
  #disposePromise: Promise<void> | undefined;

  /** @internal Use {@link Model.createSharedContext}. */
  constructor(model: Model, handle: NativeSharedContextHandle) {
    this.model = model;
    this.#handle = handle;
    this.sequences = handle.sequences();
    this.maxContextSize = handle.maxContextSize();
    this.kvLayout = handle.kvLayout();
    this.sequenceContextSize = handle.sequenceContextSize();
    this.kvBytesPerCell = handle.kvBytesPerCell();
  }

  /** KV cells now: a cache with a maxContextSize above its start grows and shrinks between steps. */
  get contextSize(): number {
    return this.#disposePromise !== undefined ? 0 : this.#handle.contextSize();
  }

  /** How many times the cache grew or shrank. */
  get resizes(): number {
    return this.#disposePromise !== undefined ? 0 : this.#handle.resizes();
  }

  /** Sequences created and not disposed yet. */
  get liveSequences(): number {
    return this.#disposePromise !== undefined ? 0 : this.#handle.liveSequences();
  }

  get disposed(): boolean {
    return this.#disposePromise !== undefined;
  }

  /** Cells occupied now (sum over live sequences of pos_max − pos_min + 1), as of the last finished step. */
  cellsUsed(): number {
    return this.#disposePromise !== undefined ? 0 : this.#handle.cellsUsed();
  }

  /**
   * A new, empty sequence holding at most `contextSize` tokens (≤ {@link sequenceContextSize}).
   * @throws LlamaDialogError InsufficientMemory when every sequence id is taken; InvalidArgument for a bad size;
   *   ObjectDisposed after dispose.
   */
  createSequence(options: { contextSize: number }): Sequence {
    if (this.#disposePromise !== undefined) throw new LlamaDialogError('ObjectDisposed', 'the shared context has been disposed');
    if (options === null || typeof options !== 'object' || !Number.isInteger(options.contextSize) || options.contextSize < 1) {
      throw new LlamaDialogError('InvalidArgument', 'createSequence expects { contextSize } with a whole number of tokens >= 1');
    }
    if (options.contextSize > this.sequenceContextSize) {
      const what = this.kvLayout === 'unified' ? "the shared context's size" : "its KV stream: the shared context's size / sequences";
      throw new LlamaDialogError('InvalidArgument', `a sequence holds at most ${this.sequenceContextSize} tokens (${what}), not ${options.contextSize}`);
    }
    const handle = callNativeSync(() => this.#handle.createSequence({ contextSize: options.contextSize }));
    const sequence = new Sequence(this, handle, (gone) => this.#live.delete(gone));
    this.#live.add(sequence);
    return sequence;
  }

  /** Frees the llama_context; waits for running work; every sequence is disposed with it. Idempotent. */
  dispose(): Promise<void> {
    this.#disposePromise ??= (async () => {
      await Promise.allSettled([...this.#live].map((sequence) => sequence.dispose()));
      await callNative(() => this.#handle.dispose());
    })();
    return this.#disposePromise;
  }
}
