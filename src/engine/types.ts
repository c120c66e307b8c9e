/**
 * Shapes of the engine layer (Model / Context), shared by the prompt, graph, host and agent layers.
 * The classes in src/engine implement them over the native addon; pure-logic tests may fake them.
 */
import type { EmbeddingContext } from './embedding-context.js';
import type { CreateEmbeddingContextOptions } from './model.js';
import { NATIVE_KV_CACHE_TYPES, type NativeStepProfile } from '../native/binding.js';

/** KV cache element types a context may use (the one list; option schemas derive their enums from it). */
export const KV_CACHE_TYPES = NATIVE_KV_CACHE_TYPES;
export type KvCacheType = (typeof KV_CACHE_TYPES)[number];

/**
 * The KV cache of a sliding-window model's window layers (Gemma 2/3, …): `full` keeps every position (llama.cpp's
 * swa_full), so any prefix can be reused; `window` keeps about the window (less memory), and a prompt that diverges
 * further back than the window layers still reach is read again from the start. Shared contexts are always `full`.
 */
export const SWA_CACHE_KINDS = ['full', 'window'] as const;
export type SwaCacheKind = (typeof SWA_CACHE_KINDS)[number];

/** Facts about a loaded model, read from its GGUF metadata. */
export interface ModelInfo {
  architecture: string;
  /** Context length the model was trained with (tokens). */
  trainedContextSize: number;
  /** Sliding-window attention span (tokens) of the model's window layers; 0 when it has none. */
  slidingWindow: number;
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
  /** Floats of one pooled embedding (the model's output width; the hidden width for most models). */
  embeddingOutputSize: number;
  /** The pooling the GGUF declares: 'none' for a text-generation model, 'mean' / 'cls' / 'last' for an embedding
   *  model, 'rank' for a reranker. {@link Model.createEmbeddingContext} uses it unless told otherwise. */
  pooling: 'none' | 'mean' | 'cls' | 'last' | 'rank';
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

/** Sampling settings; an unset field takes the sampler's default (native/sampler.h), given here. */
export interface SamplingOptions {
  /** Default 0.8; 0 or less = greedy. */
  temperature?: number;
  /** Default 40; 0 or less = off. */
  topK?: number;
  /** Default 0.95; 1 or more = off. */
  topP?: number;
  /** Default 0.05; 0 or less = off. */
  minP?: number;
  /** Default 1.0 (no penalty). */
  repeatPenalty?: number;
  /** How many recent tokens the penalties look at (default 64). */
  penaltyLastN?: number;
  /** Default 0. */
  presencePenalty?: number;
  /** Default 0. */
  frequencyPenalty?: number;
  /** Default 0 = a random seed. */
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
  /**
   * Record the decode-loop figures of every engine step this generation takes part in (result.profile). Default
   * false; costs nothing when off.
   */
  profile?: boolean;
  /**
   * Prompt-lookup drafting: when this generation decodes alone, the most tokens per step guessed from an earlier
   * place in the sequence where its last tokens occurred, decoded with the sampled one and kept while the sampler
   * agrees. The reply is the one step-by-step decoding gives (to float rounding between batch shapes); only the
   * number of decodes changes. 0 = off; default 8 (engine-options.ts DEFAULT_DRAFT_TOKENS).
   */
  draftTokens?: number;
}

export interface GenerateTimings {
  promptReused: number;
  promptEvaluated: number;
  promptMs: number;
  firstTokenMs: number;
  generateMs: number;
  tokensGenerated: number;
  /** Tokens prompt lookup guessed and decoded beside the sampled ones, and how many the sampler kept (fakes: absent). */
  draftedTokens?: number;
  acceptedDraftTokens?: number;
  /**
   * Monotonic ms (one clock for the whole process, not wall time) when the request began and ended on the model's
   * compute thread; the native engine sets them, fakes may not.
   */
  startedAt?: number;
  endedAt?: number;
}

/** One engine step (one llama_decode) as seen by one generation: the native record, field by field. */
export type GenerateStepProfile = NativeStepProfile;

export interface GenerateResult {
  /**
   * The reply: every piece streamed to onToken. A token's text is read when it is sampled, one step before it is
   * decoded, so an aborted or failed generation's text may end with the piece of one token `tokens` lacks.
   */
  text: string;
  /** Generated token ids, as they stay in the KV cache (an end-of-generation token is not included). */
  tokens: Int32Array;
  stopReason: StopReason;
  timings: GenerateTimings;
  /** Present when the call asked for `profile: true`. */
  profile?: { steps: GenerateStepProfile[] };
}

/**
 * One KV cache with an exact mirror of its tokens. Two physical forms share this API (SPEC §2.4): an own
 * llama_context, or one sequence of a model-wide shared context ({@link InferenceSequence}).
 */
export interface InferenceContext {
  readonly contextSize: number;
  /**
   * Bytes of KV memory this handle holds now, as the engine reports it: an own context its whole allocation while it
   * exists (0 after release), a sequence the cells it occupies times the bytes per cell.
   */
  readonly kvBytes: number;
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

/**
 * How the sequences of a shared context hold their KV cells.
 * - `unified`: one cache all sequences draw from; any one may grow to the whole `contextSize`, a shared prefix costs
 *   its cells once, but every token's attention scans the cells in use by all sequences (other sequences' cells are
 *   masked: llama.cpp's CPU flash attention skips them one by one), so a step's attention grows with the agents.
 * - `perSequence`: `contextSize` split evenly into one KV stream per sequence (llama.cpp's kv_unified = false); a
 *   sequence holds at most `contextSize / sequences` tokens and attends only over its own. A shared-prefix copy moves
 *   bytes instead of sharing cells.
 */
export const KV_LAYOUTS = ['unified', 'perSequence'] as const;
export type KvLayout = (typeof KV_LAYOUTS)[number];

/** Settings of a model-wide shared context (SPEC §2.4): one llama_context whose KV cells hold many sequences. */
export interface SharedContextOptions {
  /** Sequences it can hold at once (llama.cpp's n_seq_max). */
  sequences: number;
  /** KV cells (tokens) of all of its sequences together. */
  contextSize: number;
  batchSize?: number;
  threads?: number;
  kvCacheType?: KvCacheType;
  /** Default `unified`. */
  kvLayout?: KvLayout;
  /**
   * Unified layout only: the most KV cells the cache may grow to. Without it the cache is fixed at `contextSize`.
   * With it, `contextSize` is where the cache starts and the floor it shrinks back to; a sequence may hold up to
   * `maxContextSize` tokens.
   */
  maxContextSize?: number;
}

/**
 * A model-wide llama_context with `sequences` sequence ids over one KV cache or one stream each. Every step of its engine gathers
 * the pending work of all its sequences (prompt chunks and the next token of each generating one) into one
 * llama_decode (continuous batching); sampling, stop strings, streaming and abort stay per sequence.
 */
export interface SharedInferenceContext {
  readonly sequences: number;
  /** KV cells of all sequences together, now (a growing cache changes it between steps). */
  readonly contextSize: number;
  /** The most cells the cache may grow to (`contextSize` for a fixed one). Optional: fakes may lack it. */
  readonly maxContextSize?: number;
  /** How many times the cache grew or shrank. Optional: fakes may lack it. */
  readonly resizes?: number;
  readonly kvLayout: KvLayout;
  /** The most tokens one sequence can hold: `contextSize` when unified, its stream's share per sequence. */
  readonly sequenceContextSize: number;
  /** KV bytes one cell (one token) takes, over all layers. */
  readonly kvBytesPerCell: number;
  /** Sequences that exist now (created and not disposed). */
  readonly liveSequences: number;
  /** Cells occupied now, read from the KV cache itself. */
  cellsUsed(): number;
  /**
   * A new, empty sequence holding at most `contextSize` tokens (≤ sequenceContextSize).
   * @throws LlamaDialogError InsufficientMemory when every sequence id is taken; InvalidArgument for a bad size.
   */
  createSequence(options: { contextSize: number }): InferenceSequence;
  /** Frees the llama_context; waits for running work; every sequence is disposed with it. */
  dispose(): Promise<void>;
}

/** One sequence of a {@link SharedInferenceContext}: the same API as an own context, plus prefix copies. */
export interface InferenceSequence extends InferenceContext {
  readonly shared: SharedInferenceContext;
  /**
   * Makes this sequence hold exactly the first `length` tokens of `source` (a sequence of the same shared context)
   * without decoding them (llama_memory_seq_cp): shared-prefix spawn. What this sequence held before is dropped.
   * With `expected` (the tokens this sequence is meant to start with, at least `length` of them) the source may be
   * running: the copy happens between two engine steps and takes the longest prefix of `expected[0..length)` the
   * source holds at that moment, possibly fewer tokens or none. Resolves with the number of tokens copied.
   * @throws LlamaDialogError InvalidArgument (another shared context, length beyond the source's tokens or this
   *   sequence's size); ContextBusy (without `expected`, a running source); ObjectDisposed.
   */
  copyPrefixFrom(source: InferenceSequence, length: number, expected?: Int32Array): Promise<number>;
}

/** Settings of one per-node context, as the runtime asks the engine for it. */
export interface RuntimeContextOptions {
  /** Tokens; already resolved (never 0 here). */
  contextSize: number;
  batchSize?: number;
  threads?: number;
  kvCacheType?: KvCacheType;
}

/**
 * The model port: the narrow slice of a loaded model that model hosting and the graph runtime use. The engine's
 * `Model` class satisfies it structurally; unit tests pass a fake. Keeping it this small is what lets the graph
 * runtime be tested without the addon.
 */
export interface RuntimeModel extends Tokenizer {
  readonly info: ModelInfo;
  isEndOfGeneration(token: number): boolean;
  createContext(options: RuntimeContextOptions): Promise<InferenceContext>;
  /** A model-wide shared context for the `contexts: 'shared'` form (SPEC §2.4). Optional: fakes may lack it. */
  createSharedContext?(options: SharedContextOptions): Promise<SharedInferenceContext>;
  /**
   * JSON Schema → GBNF conversion for grammars. Optional: hosts fall back to llama.cpp's converter
   * (`jsonSchemaToGrammar` of the engine); a fake model supplies its own so runtime tests need no addon.
   */
  jsonSchemaToGrammar?(schema: object): string;
  /** An embedding context (the engine's Model has one; fakes may not). */
  createEmbeddingContext?(options: CreateEmbeddingContextOptions): Promise<EmbeddingContext>;
  dispose(): Promise<void>;
}
