/**
 * One llama_context (one KV cache) with an exact mirror of the tokens it holds. Every call reuses
 * the longest common prefix with the mirror and decodes only the rest. One operation at a time:
 * a call made while another runs fails with ContextBusy (callers that share a context queue
 * their work themselves, e.g. the per-model scheduler).
 */
import type { NativeContextHandle, NativeContextSettings } from '../native/binding.js';
import { InferenceHandle } from './inference-handle.js';
import type { Model } from './model.js';

export class Context extends InferenceHandle {
  /** The model this context runs (kept alive by the context). */
  readonly model: Model;
  /** The settings the context was created with (contextSize 0 already resolved above). */
  readonly settings: Readonly<NativeContextSettings>;

  /** @internal Use {@link Model.createContext}. */
  constructor(model: Model, handle: NativeContextHandle, settings: NativeContextSettings) {
    super(handle);
    this.model = model;
    this.settings = Object.freeze({ ...settings, contextSize: this.contextSize });
  }

  /** Frees the KV cache (and its threads) but keeps the settings; the next call re-creates it empty. */
  override release(): Promise<void> {
    return super.release();
  }
}
