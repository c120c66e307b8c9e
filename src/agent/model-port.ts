import type { InferenceContext, ModelInfo, Tokenizer } from '../engine/types.js';

/** KV cache element type of a context. */
export type KvCacheType = 'f16' | 'q8_0' | 'q4_0';

/** Settings of one per-node context, as the runtime asks the engine for it. */
export interface RuntimeContextOptions {
  /** Tokens; already resolved (never 0 here). */
  contextSize: number;
  batchSize?: number;
  threads?: number;
  kvCacheType?: KvCacheType;
}

/**
 * The narrow slice of a loaded model that the agent runtime uses. The engine's `Model` class satisfies it
 * structurally; unit tests pass a fake. Keeping it this small is what lets the graph runtime be tested without
 * the addon.
 */
export interface RuntimeModel extends Tokenizer {
  readonly info: ModelInfo;
  isEndOfGeneration(token: number): boolean;
  createContext(options: RuntimeContextOptions): Promise<InferenceContext>;
  dispose(): Promise<void>;
}

/** How a model file is opened; the default is the engine's `loadModel`. */
export interface ModelLoadOptions {
  path: string;
  gpuLayers?: number;
  useMmap?: boolean;
}

export type ModelLoader = (options: ModelLoadOptions) => Promise<RuntimeModel>;
