/**
 * Typed surface of the native addon (native/addon.cpp) and the one place where its errors become
 * {@link LlamaDialogError}s. Only src/engine talks to these handles; users see Model and Context.
 * The shapes here are the addon's own (what native/*.cpp reads and writes); the engine's public types are built
 * on them, never the other way round, so this file imports nothing above it.
 */
import { ErrorCode, LlamaDialogError } from '../errors.js';

/** GGUF metadata as native/model.cpp reports it. */
export interface NativeModelInfo {
  architecture: string;
  trainedContextSize: number;
  /** Sliding-window span (tokens), 0 when none (llama_model_n_swa). */
  slidingWindow: number;
  vocabSize: number;
  embeddingSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  parameterCount: number;
  fileSize: number;
  chatTemplate: string | null;
  /** Special token ids; -1 when the vocabulary has none. */
  bos: number;
  eos: number;
  eot: number;
  vocabOnly: boolean;
  /** Floats of one pooled embedding (llama_model_n_embd_out). */
  embeddingOutputSize: number;
  /** The pooling the GGUF declares (`<arch>.pooling_type`): 'none' for a text-generation model. */
  pooling: NativePooling | 'none';
  /** The vocabulary asks for BOS at the start of a sequence. */
  addBos: boolean;
}

/** KV cache element types the addon accepts (native/context.cpp); the engine's `KvCacheType` is this list. */
export const NATIVE_KV_CACHE_TYPES = ['f16', 'q8_0', 'q4_0'] as const;
export type NativeKvCacheType = (typeof NATIVE_KV_CACHE_TYPES)[number];
export type NativeFlashAttention = 'auto' | 'on' | 'off';

export interface NativeContextSettings {
  /** Tokens; 0 = the model's trained size. */
  contextSize: number;
  /** n_batch = n_ubatch (tokens per llama_decode call). */
  batchSize: number;
  threads: number;
  kvCacheType: NativeKvCacheType;
  flashAttention: NativeFlashAttention;
  /** Sliding-window layers: full-size cache (llama.cpp swa_full = true) or window-sized. */
  swaCache: 'full' | 'window';
}

/** Pooling of an embedding context: 'model' = what the GGUF declares. 'rank' only ever comes from the GGUF. */
export type NativePooling = 'mean' | 'cls' | 'last' | 'rank';
export type NativePoolingChoice = 'model' | 'mean' | 'cls' | 'last';

export interface NativeEmbeddingContextSettings {
  /** The most tokens one text may have; 0 = the model's trained context (capped at batchSize). */
  contextSize: number;
  /** Tokens of one llama_decode (n_batch = n_ubatch). */
  batchSize: number;
  /** Texts of one llama_decode (n_seq_max, at most 256). */
  sequences: number;
  threads: number;
  pooling: NativePoolingChoice;
}

export interface NativeEmbeddingContextInfo {
  dimensions: number;
  maxTokens: number;
  batchSize: number;
  sequences: number;
  pooling: NativePooling;
}

/** native/embedding_context.cpp: one embedding llama_context on the model's compute thread. */
export interface NativeEmbeddingContextHandle {
  info(): NativeEmbeddingContextInfo;
  /** One call at a time (ContextBusy otherwise). `vectors` is flat: texts × dimensions. */
  embed(texts: Int32Array[], normalize: boolean): Promise<{ vectors: Float32Array; decodes: number }>;
  abort(): void;
  dispose(): Promise<void>;
}

export interface NativeEvaluateResult {
  reused: number;
  evaluated: number;
  ms: number;
}

/** Sampler settings native/sampler.h reads; an unset field takes the sampler's default. */
export interface NativeSamplingOptions {
  temperature?: number;
  topK?: number;
  topP?: number;
  minP?: number;
  repeatPenalty?: number;
  penaltyLastN?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
}

export type NativeStopReason = 'eog' | 'stopString' | 'maxTokens' | 'aborted';

export interface NativeGenerateTimings {
  promptReused: number;
  promptEvaluated: number;
  promptMs: number;
  firstTokenMs: number;
  generateMs: number;
  tokensGenerated: number;
  /** Tokens guessed by prompt lookup and decoded beside the sampled ones; of them, those the sampler kept. */
  draftedTokens: number;
  acceptedDraftTokens: number;
  /** steady_clock ms (one clock for the whole process) when the request began / ended on the compute thread. */
  startedAt: number;
  endedAt: number;
}

/** One engine step as one generation saw it (native/sequence.h StepProfile). */
export interface NativeStepProfile {
  /**
   * The engine's step number (from 1, per context): every sequence that took part in one llama_decode reports the
   * same number, so the steps of several generations on one shared context can be told apart and counted once.
   */
  step: number;
  /** steady_clock ms (the clock of the timings' startedAt / endedAt) when the llama_decode began. */
  startedAt: number;
  /** Wall ms of llama_decode. */
  decodeMs: number;
  /** Tokens in the batch (all sequences). */
  batchTokens: number;
  /** Sequences in the batch. */
  sequences: number;
  /** Of them, those whose one token was the one they sampled last step; the others brought prompt tokens. */
  generating: number;
  /** KV cells in use after the decode (sum over live sequences of pos_max − pos_min + 1). */
  cellsUsed: number;
  /**
   * Estimate of the KV length attended over (llama.cpp pads the used cells to 256, capped at the cache or stream
   * size). Unified cache: from cellsUsed, so a prefix shared by several sequences counts once per sequence (an upper
   * bound). perSequence: the longest stream among the step's participants.
   */
  nKv: number;
  /** ms this generation spent sampling after the decode. */
  sampleMs: number;
  /** Compute graphs llama.cpp reused during the decode (0: the graph was rebuilt). */
  graphReused: number;
}

export interface NativeGenerateRequest {
  prompt: Int32Array;
  maxTokens: number;
  sampling: NativeSamplingOptions;
  stop: string[];
  /** GBNF grammar (root rule `root`); absent = unconstrained. A grammar llama.cpp cannot parse is InvalidArgument. */
  grammar?: string;
  /** Record a NativeStepProfile per engine step of this generation. */
  profile?: boolean;
  /** Prompt-lookup drafting: the most tokens guessed per step when this generation decodes alone (0 = off). */
  draftTokens?: number;
}

export interface NativeGenerateResult {
  text: string;
  tokens: Int32Array;
  stopReason: NativeStopReason;
  timings: NativeGenerateTimings;
  /** Present when the request asked for it. */
  profile?: { steps: NativeStepProfile[] };
}

export interface NativeModelHandle {
  info(): NativeModelInfo;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Int32Array;
  detokenize(tokens: Int32Array, renderSpecial: boolean): string;
  tokenToPiece(token: number, renderSpecial: boolean): string;
  isEog(token: number): boolean;
  createContext(settings: NativeContextSettings): Promise<NativeContextHandle>;
  /** One llama_context with n_seq_max = sequences over a unified KV cache of contextSize cells. */
  createSharedContext(settings: NativeSharedContextSettings): Promise<NativeSharedContextHandle>;
  createEmbeddingContext(settings: NativeEmbeddingContextSettings): Promise<NativeEmbeddingContextHandle>;
  /** Idempotent; the weights stay alive while contexts of the model exist. */
  dispose(): Promise<void>;
}

export interface NativeContextHandle {
  contextSize(): number;
  /** KV bytes held as of the last finished operation (0 after release or dispose). */
  kvBytes(): number;
  /** Copy of the KV mirror; throws ContextBusy while an operation runs. */
  tokens(): Int32Array;
  isBusy(): boolean;
  evaluate(tokens: Int32Array): Promise<NativeEvaluateResult>;
  generate(request: NativeGenerateRequest, onPiece?: (piece: string, token: number) => void): Promise<NativeGenerateResult>;
  scoreNext(prompt: Int32Array, candidates: Int32Array): Promise<Float64Array>;
  /** `maxBytes`: the largest state one ArrayBuffer may hold here; larger states reject with InsufficientMemory. */
  saveState(maxBytes?: number): Promise<Uint8Array>;
  loadState(bytes: Uint8Array, tokens: Int32Array): Promise<void>;
  /** An own context frees its llama_context; a sequence removes its cells from the shared one. */
  release(): Promise<void>;
  /** Sequences only: hold the first `length` tokens of `source` (same shared context) by llama_memory_seq_cp. */
  copyPrefixFrom(source: NativeContextHandle, length: number, expected?: Int32Array): Promise<number>;
  /** Asks the running operation to stop (between steps and inside llama_decode). */
  abort(): void;
  dispose(): Promise<void>;
}

export interface NativeSharedContextSettings extends NativeContextSettings {
  /** Sequences the context can hold at once (n_seq_max). */
  sequences: number;
  kvLayout?: 'unified' | 'perSequence';
  /** Unified only: the most cells the KV cache may grow to (0 = fixed at contextSize). */
  maxContextSize?: number;
}

/** native/shared_context.cpp: a multi-sequence engine; its sequences are NativeContextHandles. */
export interface NativeSharedContextHandle {
  sequences(): number;
  /** KV cells now (changes when the cache grows or shrinks). */
  contextSize(): number;
  maxContextSize(): number;
  /** How many times the cache was resized. */
  resizes(): number;
  sequenceContextSize(): number;
  kvLayout(): 'unified' | 'perSequence';
  kvBytesPerCell(): number;
  liveSequences(): number;
  /** Cells in use as of the last finished step. */
  cellsUsed(): number;
  /** Synchronous; InsufficientMemory when every seq_id is taken. */
  createSequence(options: { contextSize: number }): NativeContextHandle;
  /** Frees the llama_context after the work queued before it; its sequences refuse every later call. */
  dispose(): Promise<void>;
}

/** Identity of a saved state as native/state_format.h checks it (kvType is ggml's type id). */
export interface NativeStateTarget {
  fingerprint: bigint;
  contextSize: number;
  kvType: number;
}

/** binding._internal: the addon's pure units, for tests without a model. Not public API. */
export interface NativeInternalEntry {
  /** Feeds `pieces` (token pieces as bytes) through a TextStream until a stop string completes. */
  textStream(stops: string[], pieces: Uint8Array[]): {
    released: Uint8Array[];
    stopped: boolean;
    keptTokens: number;
    flushed: Uint8Array;
    text: Uint8Array;
  };
  stateFormat: {
    headerSize: number;
    write(source: NativeStateTarget, tokens: Int32Array, payload: Uint8Array): Uint8Array;
    /** The payload size; throws StateMismatch saying why the state cannot be loaded. */
    check(bytes: Uint8Array, target: NativeStateTarget, tokens: Int32Array): number;
  };
}

export interface NativeLoadOptions {
  gpuLayers?: number;
  useMmap?: boolean;
  vocabOnly?: boolean;
}

export interface NativeAddon {
  loadModel(path: string, options: NativeLoadOptions): Promise<NativeModelHandle>;
  /** 1 debug, 2 info, 3 warn, 4 error, 5 silent (default). */
  setLogLevel(level: number): void;
  /** Most threads any decode may use from its next step on; 0 = no cap (native/decode_thread_cap.h). */
  setDecodeThreadCap(cap: number): void;
  setLogCallback(callback: ((level: number, text: string) => void) | null): void;
  /** llama.cpp's JSON-schema → GBNF converter (common/json-schema-to-grammar.cpp); throws InvalidArgument. */
  jsonSchemaToGrammar(schemaJson: string): string;
  /** llama.cpp's one-line system report (backends and their features). */
  systemInfo(): string;
  /** True when ggml's backends are run-time modules (prebuilt packages); false for a static source build. */
  readonly dynamicBackends: boolean;
  /** Lets ggml load every backend module in `dir`, the best CPU variant by CPUID among them. */
  loadBackendsFrom(dir: string): { dynamic: boolean; loaded: { backend: string; path: string }[]; errors: string[] };
  /** Loads one backend module file; `backend` is its registry name, or null with `error` saying why. */
  loadBackendFile(path: string): { backend: string | null; error: string | null };
  /** null when the dynamic linker can load `soname`, else its error text. */
  probeLibrary(soname: string): string | null;
  /** The registered backends, their devices and (for the CPU) the instruction-set features in use. */
  listBackends(): NativeBackendInfo[];
  /** native/vector_index_handle.cpp: an exact or HNSW cosine index over rows 0..n-1. */
  readonly VectorIndex: new (options: NativeVectorIndexOptions) => NativeVectorIndexHandle;
  /** Test entry of the pure native units. */
  readonly _internal: NativeInternalEntry;
}

export interface NativeVectorIndexOptions {
  kind: 'exact' | 'hnsw';
  dimensions: number;
  connectivity?: number;
  expansionAdd?: number;
  expansionSearch?: number;
  /** Threads that insert rows while an HNSW graph is built. */
  threads?: number;
}

export interface NativeVectorSearchResult {
  rows: Uint32Array;
  /** Cosine distances (1 - cos), nearest first. */
  distances: Float32Array;
  /** A filtered HNSW search that scored the few allowed rows exactly instead. */
  exactFallback: boolean;
}

export interface NativeVectorIndexHandle {
  info(): { kind: 'exact' | 'hnsw'; dimensions: number; rows: number; built: boolean; memoryBytes: number };
  /** Once, off the JS thread: rows × dimensions floats. */
  build(vectors: Float32Array): Promise<void>;
  /** HNSW only: the same rows and a graph from serialize(). */
  restore(vectors: Float32Array, graph: Uint8Array): Promise<void>;
  serialize(): Promise<Uint8Array>;
  /** Synchronous; `maxDistance` < 0 = no limit; `allowed`: one byte per row (non-zero = allowed). ContextBusy while building. */
  search(query: Float32Array, k: number, maxDistance: number, allowed?: Uint8Array, allowedCount?: number): NativeVectorSearchResult;
  setExpansionSearch(expansion: number): void;
}

export interface NativeBackendInfo {
  name: string;
  devices: { name: string; description: string; type: string }[];
  features: Record<string, string>;
}

const knownCodes = new Set<number>(Object.values(ErrorCode));

/** Turns an error thrown by the addon (an Error with a numeric `code`) into a LlamaDialogError. */
export function toDialogError(error: unknown): unknown {
  if (error instanceof LlamaDialogError) return error;
  if (error instanceof Error) {
    const code = (error as Error & { code?: unknown }).code;
    if (typeof code === 'number' && knownCodes.has(code)) return LlamaDialogError.fromCode(code, error.message, error);
    return new LlamaDialogError('InferenceFailed', error.message, { cause: error });
  }
  return error;
}

/** Awaits a native promise, rethrowing its failure as a LlamaDialogError. */
export async function callNative<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw toDialogError(error);
  }
}

/** Runs a synchronous native call, rethrowing its failure as a LlamaDialogError. */
export function callNativeSync<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    throw toDialogError(error);
  }
}
