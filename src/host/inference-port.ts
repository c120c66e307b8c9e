import { commonPrefixLength } from '../engine/common-prefix.js';
import { jsonSchemaToGrammar } from '../engine/grammar.js';
import type { GenerateOptions, GenerateResult, InferenceContext, ModelInfo, Tokenizer } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import type { GenerateRequest, InferencePort, ScoreResult } from '../graph/inference-port.js';
import type { CacheFacts } from '../diag/cache-facts.js';
import { promptKitFor, type ModelPromptKit } from '../prompt/model-prompt-kit.js';
import type { CacheWork, NodeCache } from './node-cache.js';

/**
 * The one way nodes reach a model: each request runs on the node's own cache when the model's scheduler lets it,
 * and carries `signal` (the turn's cancellation; none for a prefill at agent creation). Taking the port starts a
 * new period of the cache's miss facts, so build one per node step.
 */
export function inferencePortFor(cache: NodeCache, signal?: AbortSignal, timeoutMs = 0, profile = false): HostedInferencePort {
  return new ScheduledInferencePort(cache, signal, timeoutMs, profile);
}

/**
 * After a timeout aborts a call, how long the queue waits for the engine to give the context back before it moves on
 * anyway: an abort lands within one token, so this only matters for a call that is truly stuck.
 */
const ABORT_GRACE_MS = 1000;

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
    private readonly timeoutMs: number,
    private readonly profile: boolean,
  ) {
    const { model, id } = cache.lease;
    this.modelId = id;
    this.modelInfo = model.info;
    this.tokenizer = model;
    this.prompts = promptKitFor(model);
    this.contextSize = cache.contextSize;
    this.cacheFacts = cache.takeCacheFacts();
  }

  generate(request: GenerateRequest): Promise<GenerateResult> {
    return this.schedule({ prompt: request.prompt, maxTokens: request.maxTokens }, (context, signal) => {
      const options: GenerateOptions = { prompt: request.prompt, maxTokens: request.maxTokens, signal };
      if (request.sampling) options.sampling = request.sampling;
      if (request.stop && request.stop.length > 0) options.stop = request.stop;
      if (request.grammar !== undefined) options.grammar = request.grammar;
      if (request.onToken) options.onToken = request.onToken;
      if (this.profile) options.profile = true;
      return context.generate(options);
    });
  }

  score(prompt: Int32Array, candidates: Int32Array): Promise<ScoreResult> {
    return this.schedule({ prompt, maxTokens: 1 }, async (context, signal) => {
      // scoreNext reports no reuse figures: the mirror before the call says what the cache keeps.
      const reused = commonPrefixLength(context.tokens, prompt);
      const scores = await context.scoreNext(prompt, candidates, signal ? { signal } : {});
      return { scores, reused, evaluated: prompt.length - reused };
    });
  }

  async prefill(tokens: Int32Array): Promise<void> {
    await this.schedule({ prompt: tokens }, (context, signal) => context.evaluate(tokens, signal ? { signal } : {}));
  }

  jsonSchemaToGrammar(schema: object): string {
    const model = this.cache.lease.model;
    return model.jsonSchemaToGrammar ? model.jsonSchemaToGrammar(schema) : jsonSchemaToGrammar(schema);
  }

  release(): Promise<void> {
    return this.cache.lease.scheduler.run(() => this.cache.release(), this.signal);
  }

  private schedule<T>(work: CacheWork, job: (context: InferenceContext, signal: AbortSignal | undefined) => Promise<T>): Promise<T> {
    const signal = this.signal;
    return this.cache.lease.scheduler.run(async () => {
      if (signal?.aborted) throw new LlamaDialogError('Aborted', 'turn cancelled');
      if (this.timeoutMs <= 0) return this.cache.use(signal ? { ...work, signal } : work, (context) => job(context, signal));
      return this.withTimeout(work, job, signal);
    }, signal);
  }

  /**
   * Runs a job under the time limit, which starts when the model starts the job (waiting in the queue does not
   * count). Past it the job is aborted and InferenceTimeout (4002) is thrown; the queue moves on once the engine has
   * let go of the context (or after a short grace for a call that ignores the abort).
   */
  private async withTimeout<T>(
    work: CacheWork,
    job: (context: InferenceContext, signal: AbortSignal) => Promise<T>,
    turnSignal: AbortSignal | undefined,
  ): Promise<T> {
    const controller = new AbortController();
    const onTurnAbort = (): void => controller.abort();
    turnSignal?.addEventListener('abort', onTurnAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => {
        controller.abort();
        resolve('expired');
      }, this.timeoutMs);
    });
    const running = this.cache.use({ ...work, signal: controller.signal }, (context) => job(context, controller.signal));
    // Once expired nobody awaits the work: its late failure (an abort error) must not surface as unhandled.
    running.catch(() => undefined);
    try {
      const first = await Promise.race([running.then(() => 'done' as const), expired]);
      if (first === 'done') return await running;
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([
        running.then(
          () => undefined,
          () => undefined,
        ),
        new Promise<void>((resolve) => {
          grace = setTimeout(resolve, ABORT_GRACE_MS);
        }),
      ]);
      clearTimeout(grace);
      throw new LlamaDialogError(
        'InferenceTimeout',
        `inference on model ${this.modelId} took longer than ${this.timeoutMs} ms and was stopped; raise inferenceTimeoutMs or lower maxTokens`,
      );
    } finally {
      clearTimeout(timer);
      turnSignal?.removeEventListener('abort', onTurnAbort);
    }
  }
}
