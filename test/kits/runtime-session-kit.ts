// Helpers of the runtime tier: agents on the real engine with the tiny synthetic model.
import { LlamaDialogError } from '../../src/errors.js';
import { loadModel } from '../../src/engine/load-model.js';
import type { GenerateOptions, GenerateResult, InferenceContext } from '../../src/engine/types.js';
import type { RuntimeContextOptions, RuntimeModel } from '../../src/engine/types.js';
import { ModelRegistry, type ModelCatalogEntry } from '../../src/host/model-registry.js';
import { Session, type SessionHostOptions } from '../../src/agent/session.js';
import { ensureTestModel } from './models.js';

/** One thread per context: vitest runs two forks on two shared cores. */
export const RUNTIME_ENGINE = { threads: 1 } as const;

/**
 * Replaces sampling by a fixed output for prompts a test picks (teacher forcing): the prompt and the forced tokens
 * are really decoded, so the KV cache and its mirror are exactly what a real generation would leave. Lets a test
 * make the random-weight tiny model "call a tool".
 */
class ForcedOutputContext implements InferenceContext {
  constructor(
    private readonly inner: InferenceContext,
    private readonly model: RuntimeModel,
    private readonly forced: (prompt: string) => string | undefined,
  ) {}

  get contextSize(): number {
    return this.inner.contextSize;
  }

  get tokens(): Int32Array {
    return this.inner.tokens;
  }

  get kvBytes(): number {
    return this.inner.kvBytes;
  }

  evaluate(tokens: Int32Array, options?: { signal?: AbortSignal }) {
    return this.inner.evaluate(tokens, options);
  }

  async generate(options: GenerateOptions): Promise<GenerateResult> {
    const text = this.forced(this.model.detokenize(options.prompt));
    if (text === undefined) return this.inner.generate(options);
    // The engine's own refusal, before the cache is touched: forcing must not let an over-budget request through.
    if (options.prompt.length + options.maxTokens > this.inner.contextSize) {
      throw new LlamaDialogError(
        'ContextOverflow',
        `the prompt has ${options.prompt.length} tokens and maxTokens is ${options.maxTokens}, but the context holds ${this.inner.contextSize}`,
      );
    }
    const signal = options.signal ? { signal: options.signal } : {};
    const prompt = await this.inner.evaluate(options.prompt, signal);
    const forced = this.model.tokenize(text, { addSpecial: false, parseSpecial: false });
    const tokens = forced.subarray(0, options.maxTokens);
    const whole = new Int32Array(options.prompt.length + tokens.length);
    whole.set(options.prompt);
    whole.set(tokens, options.prompt.length);
    await this.inner.evaluate(whole, signal);
    // Streamed as the engine would, one piece per token (speaking nodes speak from the stream).
    if (options.onToken) for (const token of tokens) options.onToken(this.model.detokenize(Int32Array.of(token)), token);
    return {
      text: tokens.length === forced.length ? text : this.model.detokenize(tokens),
      tokens,
      stopReason: tokens.length === forced.length ? 'eog' : 'maxTokens',
      timings: { promptReused: prompt.reused, promptEvaluated: prompt.evaluated, promptMs: prompt.ms, firstTokenMs: 0, generateMs: 0, tokensGenerated: tokens.length },
    };
  }

  scoreNext(prompt: Int32Array, candidates: Int32Array, options?: { signal?: AbortSignal }) {
    return this.inner.scoreNext(prompt, candidates, options);
  }

  saveState() {
    return this.inner.saveState();
  }

  loadState(bytes: Uint8Array, tokens: Int32Array) {
    return this.inner.loadState(bytes, tokens);
  }

  release() {
    return this.inner.release();
  }

  dispose() {
    return this.inner.dispose();
  }
}

export interface RuntimeHarness {
  session: Session;
  registry: ModelRegistry;
  path: string;
  /** Set to force the output of generations whose prompt it matches (undefined = sample for real). */
  forceOutput: (prompt: string) => string | undefined;
}

/**
 * A created session whose catalog name `tiny` is the tiny synthetic model, loaded by the real engine. `entry` adds
 * catalog fields (scheduling, KV budgets); `onContext` is told of every context the engine creates; `host` adds
 * session host options.
 */
export async function createRuntimeHarness(
  harnessOptions: {
    entry?: Partial<ModelCatalogEntry>;
    onContext?: (context: InferenceContext) => void;
    /** More host options of the session (a voice loader, ...). */
    host?: Omit<SessionHostOptions, 'registry'>;
  } = {},
): Promise<RuntimeHarness> {
  const path = await ensureTestModel('tiny');
  const harness: RuntimeHarness = {
    path,
    forceOutput: () => undefined,
    session: undefined as unknown as Session,
    registry: undefined as unknown as ModelRegistry,
  };
  harness.registry = new ModelRegistry({
    // Own contexts unless a test asks otherwise: forced output (below) wraps own contexts only, and the tests that
    // force a tool call or a reply need it on every node. The shared form has its own tests (shared-context, policy).
    catalog: { tiny: { contexts: 'own', ...harnessOptions.entry, path } },
    loader: async (options) => {
      const model = await loadModel(options);
      const wrapped: RuntimeModel = {
        info: model.info,
        tokenize: (text, opts) => model.tokenize(text, opts),
        detokenize: (tokens, opts) => model.detokenize(tokens, opts),
        isEndOfGeneration: (token) => model.isEndOfGeneration(token),
        createContext: async (contextOptions: RuntimeContextOptions) => {
          const context = new ForcedOutputContext(await model.createContext(contextOptions), wrapped, (prompt) => harness.forceOutput(prompt));
          harnessOptions.onContext?.(context);
          return context;
        },
        dispose: () => model.dispose(),
      };
      // The engine's shared context (SPEC §2.4) passes through unwrapped once the Model has it: forced output applies
      // to own contexts only.
      const engineModel = model as unknown as RuntimeModel;
      if (typeof engineModel.createSharedContext === 'function') {
        wrapped.createSharedContext = (sharedOptions) => (engineModel.createSharedContext as NonNullable<RuntimeModel['createSharedContext']>).call(model, sharedOptions);
      }
      return wrapped;
    },
  });
  harness.session = new Session({ ...harnessOptions.host, registry: harness.registry }).create({ gameName: 'runtime tests' });
  return harness;
}
