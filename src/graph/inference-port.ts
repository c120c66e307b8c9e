import type { GenerateResult, ModelInfo, SamplingOptions, Tokenizer } from '../engine/types.js';
import type { ModelPromptKit } from '../prompt/model-prompt-kit.js';

/** One generation a node asks for: the prompt tokens and how to sample the reply. */
export interface GenerateRequest {
  prompt: Int32Array;
  maxTokens: number;
  sampling?: SamplingOptions;
  stop?: string[];
  /** GBNF grammar (start rule `root`) the reply must follow; absent = unconstrained. */
  grammar?: string;
  /** Called with each text piece as soon as it is sampled. */
  onToken?: (piece: string, token: number) => void;
}

/** Next-token log-probabilities of the candidates, and how much of the prompt the node's cache kept. */
export interface ScoreResult {
  scores: Float64Array;
  /** Prompt tokens kept from the node's KV cache. */
  reused: number;
  /** Prompt tokens decoded for this call. */
  evaluated: number;
}

/**
 * What a node asks of model hosting: work on its own KV cache, described as intent (generate, score, prefill) so
 * that whoever schedules the model sees the work itself, not an opaque closure. How requests are ordered (one at a
 * time first come first served, or several agents in one batch) is the host's policy and invisible here. Every
 * call carries the turn's cancellation; a call cancelled before it starts rejects with Aborted.
 */
export interface InferencePort {
  /**
   * Identity of the model (its catalog name, or its file name when given by path; never a machine path): replies
   * carry it so their token ids can be replayed, and save games carry the replies.
   */
  readonly modelId: string;
  readonly modelInfo: ModelInfo;
  /** The model's tokenizer, for building prompts and labels. */
  readonly tokenizer: Tokenizer;
  /** Chat template renderer and token cache shared by the nodes of this model. */
  readonly prompts: ModelPromptKit;
  /** Resolved context size (tokens). */
  readonly contextSize: number;
  /** Decodes `prompt` after whatever prefix the cache already holds, then samples up to `maxTokens`. */
  generate(request: GenerateRequest): Promise<GenerateResult>;
  /** Log-probabilities of each candidate as the next token after `prompt`. */
  score(prompt: Int32Array, candidates: Int32Array): Promise<ScoreResult>;
  /** Decodes `tokens` into the cache (a static prefix) without sampling. */
  prefill(tokens: Int32Array): Promise<void>;
  /**
   * Converts a JSON Schema into a GBNF grammar for {@link GenerateRequest.grammar} with llama.cpp's converter. A pure
   * function of the schema (no cache, no queue); throws InvalidArgument for a schema the converter cannot express.
   */
  jsonSchemaToGrammar(schema: object): string;
  /** Frees the node's KV memory; the next call starts from an empty cache. */
  release(): Promise<void>;
}
