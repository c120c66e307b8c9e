/**
 * One sequence of a {@link SharedContext}: a seq_id in the model-wide llama_context, with exactly the API and
 * semantics of an own {@link Context} (mirror, prefix reuse, generate, scoreNext, state of this sequence only).
 * Its decode work joins the other sequences' in one llama_decode per step (native/engine.h says how a batch is
 * composed); sampling, stop strings, streaming and abort stay its own.
 */
import { LlamaDialogError } from '../errors.js';
import type { NativeContextHandle } from '../native/binding.js';
import { InferenceHandle } from './inference-handle.js';
import type { SharedContext } from './shared-context.js';
import type { InferenceSequence } from './types.js';

export class Sequence extends InferenceHandle implements InferenceSequence {
  /** The shared context this sequence lives in. */
  readonly shared: SharedContext;
  readonly #onDisposed: (sequence: Sequence) => void;

  /** @internal Use {@link SharedContext.createSequence}. */
  constructor(shared: SharedContext, handle: NativeContextHandle, onDisposed: (sequence: Sequence) => void) {
    super(handle);
    this.shared = shared;
    this.#onDisposed = onDisposed;
  }

  /**
   * Makes this sequence hold exactly the first `length` tokens of `source` without decoding them
   * (llama_memory_seq_cp): shared-prefix spawn. What this sequence held before is dropped.
   * @throws LlamaDialogError InvalidArgument (a source of another shared context or not a sequence, length beyond
   *   the source's tokens or this sequence's size); ContextBusy (this sequence, or without `expected` the source, is
   *   running an operation); ObjectDisposed.
   */
  copyPrefixFrom(source: InferenceSequence, length: number, expected?: Int32Array): Promise<number> {
    if (!(source instanceof Sequence)) {
      return Promise.reject(new LlamaDialogError('InvalidArgument', 'copyPrefixFrom expects a sequence of a shared context as its source'));
    }
    if (source.shared !== this.shared) {
      return Promise.reject(new LlamaDialogError('InvalidArgument', 'copyPrefixFrom: the source sequence belongs to another shared context'));
    }
    if (source !== this && source.busy && expected === undefined) {
      return Promise.reject(new LlamaDialogError('ContextBusy', 'cannot copyPrefixFrom: an operation is still running on the source sequence'));
    }
    return this.run('copyPrefixFrom', undefined, () => this.handle.copyPrefixFrom(source.handle, length, expected));
  }

  /** Removes this sequence's cells from the shared KV cache; the shared llama_context stays. */
  override release(): Promise<void> {
    return super.release();
  }

  protected override onDisposed(): void {
    this.#onDisposed(this);
  }
}
