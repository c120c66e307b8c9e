import { commonPrefixLength } from '../engine/common-prefix.js';
import type { GenerateOptions, GenerateResult, InferenceContext, ModelInfo, Tokenizer } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import type { GenerateRequest, InferencePort, ScoreResult } from '../graph/inference-port.js';
import type { CacheFacts } from '../diag/cache-facts.js';
import { promptKitFor, type ModelPromptKit } from '../prompt/model-prompt-kit.js';
import type { NodeCache } from './node-cache.js';

/**
 * The one way nodes reach a model: each request runs on the node's own cache when the model's scheduler lets it,
 * and carries `signal` (the turn's cancellation; none for a prefill at agent creation). Taking the port starts a
 * new period of the cache's miss facts, so build one per node step.
 */
export function inferencePortFor(cache: NodeCache, signal?: AbortSignal): HostedInferencePort {
  return new ScheduledInferencePort(cache, signal);
}

/** The port as the host hands it out: what the node sees, plus the cache facts the diagnostics need. */
export interface HostedInferencePort extends InferencePort {
  /** Facts the diagnostics use to explain a cache miss, gathered since this node last ran. */
  readonly cacheFacts: CacheFacts;
}

class ScheduledInferencePort implements HostedInferencePort {
  readonly modelId: string;
  readonly modelInfo: ModelInfo;
  readonly tokenizer: Tokenizer;
  readonly prompts: ModelPromptKit;
  readonly contextSize: number;
  readonly cacheFacts: CacheFacts;

  constructor(
    private readonly cache: NodeCache,
    private readonly signal: AbortSignal | undefined,
  ) {
    const { model, path } = cache.lease;
    this.modelId = path;
    this.modelInfo = model.info;
    this.tokenizer = model;
    this.prompts = promptKitFor(model);
    this.contextSize = cache.contextSize;
    this.cacheFacts = cache.takeCacheFacts();
  }

  generate(request: GenerateRequest): Promise<GenerateResult> {
    const options: GenerateOptions = { prompt: request.prompt, maxTokens: request.maxTokens, signal: this.signal };
    if (request.sampling) options.sampling = request.sampling;
    if (request.stop && request.stop.length > 0) options.stop = request.stop;
    if (request.onToken) options.onToken = request.onToken;
    return this.schedule((context) => context.generate(options));
  }

  score(prompt: Int32Array, candidates: Int32Array): Promise<ScoreResult> {
    return this.schedule(async (context) => {
      // scoreNext reports no reuse figures: the mirror before the call says what the cache keeps.
      const reused = commonPrefixLength(context.tokens, prompt);
      const scores = await context.scoreNext(prompt, candidates, { signal: this.signal });
      return { scores, reused, evaluated: prompt.length - reused };
    });
  }

  async prefill(tokens: Int32Array): Promise<void> {
    await this.schedule((context) => context.evaluate(tokens));
  }

  release(): Promise<void> {
    return this.cache.lease.scheduler.run(() => this.cache.release(), this.signal);
  }

  private schedule<T>(job: (context: InferenceContext) => Promise<T>): Promise<T> {
    const signal = this.signal;
    return this.cache.lease.scheduler.run(async () => {
      if (signal?.aborted) throw new LlamaDialogError('Aborted', 'turn cancelled');
      return job(await this.cache.get());
    }, signal);
  }
}
