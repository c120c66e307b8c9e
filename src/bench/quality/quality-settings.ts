/** What every quality set runs on: the same model file, threads and node context size. */
export interface QualityEngineSettings {
  /** GGUF path (the CLI resolves manifest names such as `smollm2` to their cached file). */
  modelPath: string;
  threads: number;
  /** KV tokens of each node's context (classifiers, tool calls); the memory set uses its own, smaller one. */
  contextSize: number;
  /**
   * GGUF of an embedding model (MiniLM): when set, the intents set adds a row for the embedding ClassifyIntent node
   * on the same lines, for comparison with ClassifyIntentLLM.
   */
  embeddingModelPath?: string;
}

/** Told a short line after each step of a long set ("intents: letters 12/240"), for a progress display. */
export type QualityProgress = (line: string) => void;
