/**
 * Shapes of the engine layer (Model / Context), shared by the prompt, graph and agent layers.
 * The classes in src/engine implement them over the native addon; pure-logic tests may fake them.
 */

/** Facts about a loaded model, read from its GGUF metadata. */
export interface ModelInfo {
  architecture: string;
  /** Context length the model was trained with (tokens). */
  trainedContextSize: number;
  vocabSize: number;
  embeddingSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  parameterCount: number;
  fileSize: number;
  /** The GGUF's Jinja chat template (`tokenizer.chat_template`), or null when it has none. */
  chatTemplate: string | null;
  /** Special token ids; -1 when the vocabulary has none. */
  bos: number;
  eos: number;
  eot: number;
  vocabOnly: boolean;
}

export interface TokenizeOptions {
  /** Add BOS/EOS as the model's vocabulary says (default false). */
  addSpecial?: boolean;
  /** Parse special-token text such as `<|eot_id|>` into special tokens (default false). */
  parseSpecial?: boolean;
}

/** What the prompt layer needs from a model: exact tokenization. */
export interface Tokenizer {
  tokenize(text: string, options?: TokenizeOptions): Int32Array;
  detokenize(tokens: Int32Array, options?: { renderSpecial?: boolean }): string;
}

/** Sampling settings; temperature 0 means greedy. */
export interface SamplingOptions {
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repeatPenalty?: number;
  /** How many recent tokens the penalties look at (default 64). */
  penaltyLastN?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** 0 = random seed. */
  seed?: number;
}

export interface EvaluateResult {
  /** Tokens kept from the KV cache (longest common prefix with the mirror). */
  reused: number;
  /** Tokens decoded by this call. */
  evaluated: number;
  ms: number;
}

export type StopReason = 'eog' | 'stopString' | 'maxTokens' | 'aborted';

export interface GenerateOptions {
  prompt: Int32Array;
  maxTokens: number;
  sampling?: SamplingOptions;
  stop?: string[];
  /**
   * A GBNF grammar (llama.cpp's format, start rule `root`) the reply must follow; sampling only ever picks
   * tokens the grammar allows, and generation ends when the grammar is complete. Build one from a JSON
   * schema with `jsonSchemaToGrammar`. A grammar that does not parse is InvalidArgument.
   */
  grammar?: string;
  signal?: AbortSignal;
  /** Called with each text piece as soon as it is sampled. */
  onToken?: (piece: string, token: number) => void;
}

export interface GenerateTimings {
  promptReused: number;
  promptEvaluated: number;
  promptMs: number;
  firstTokenMs: number;
  generateMs: number;
  tokensGenerated: number;
}

export interface GenerateResult {
  text: string;
  /** Generated token ids, as they stay in the KV cache (an end-of-generation token is not included). */
  tokens: Int32Array;
  stopReason: StopReason;
  timings: GenerateTimings;
}

/** One KV cache (one llama_context) with an exact mirror of its tokens. */
export interface InferenceContext {
  readonly contextSize: number;
  /** Exact copy of the tokens the KV cache holds. */
  readonly tokens: Int32Array;
  evaluate(tokens: Int32Array, options?: { signal?: AbortSignal }): Promise<EvaluateResult>;
  generate(options: GenerateOptions): Promise<GenerateResult>;
  /** Log-probabilities of each candidate as the next token after `prompt`. */
  scoreNext(prompt: Int32Array, candidates: Int32Array, options?: { signal?: AbortSignal }): Promise<Float64Array>;
  saveState(): Promise<Uint8Array>;
  loadState(bytes: Uint8Array, tokens: Int32Array): Promise<void>;
  release(): Promise<void>;
  dispose(): Promise<void>;
}
