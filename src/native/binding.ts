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
}

export interface NativeGenerateRequest {
  prompt: Int32Array;
  maxTokens: number;
  sampling: NativeSamplingOptions;
  stop: string[];
  /** GBNF grammar (root rule `root`); absent = unconstrained. A grammar llama.cpp cannot parse is InvalidArgument. */
  grammar?: string;
}

export interface NativeGenerateResult {
  text: string;
  tokens: Int32Array;
  stopReason: NativeStopReason;
  timings: NativeGenerateTimings;
}

export interface NativeModelHandle {
  info(): NativeModelInfo;
  tokenize(text: string, addSpecial: boolean, parseSpecial: boolean): Int32Array;
  detokenize(tokens: Int32Array, renderSpecial: boolean): string;
  tokenToPiece(token: number, renderSpecial: boolean): string;
  isEog(token: number): boolean;
  createContext(settings: NativeContextSettings): Promise<NativeContextHandle>;
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
  release(): Promise<void>;
  /** Asks the running operation to stop (between batches and inside llama_decode). */
  abort(): void;
  dispose(): Promise<void>;
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
