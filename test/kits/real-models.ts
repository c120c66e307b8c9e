/**
 * Helpers of the real-model tier (test/real/): the pinned SmolLM2 file, loaded once per test file and shared by every
 * registry the file builds, and agents on it with greedy sampling, small contexts and REAL_TEST_THREADS threads.
 */
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import type { GenerateOptions, GenerateResult, InferenceContext, RuntimeModel } from '../../src/engine/types.js';
import { ModelRegistry, type ModelCatalogEntry } from '../../src/host/model-registry.js';
import { Session } from '../../src/agent/session.js';
import type { TurnDiagnostics, NodeDiagnostics } from '../../src/diag/turn-diagnostics.js';
import { REAL_TEST_THREADS, realModelPath, type RealModelName } from '../real/real-model-kit.js';

/** Catalog name of SmolLM2-135M-Instruct in every registry built here. */
export const SMOLLM2 = 'smollm2';

/** One generate call of an own context, as the engine saw it: for near-tie checks against other paths. */
export interface GenerateRecord {
  prompt: Int32Array;
  result: GenerateResult;
}

/**
 * The loaded model as a registry's loader gives it out: every registry of a test file shares the one engine Model
 * (a real load per registry would cost seconds and memory for nothing), so the registry's dispose must not free it.
 * Own contexts report their generate calls to `onGenerate`; the shared context passes through untouched, since a
 * sequence must stay the engine's own object for prefix copies between sequences.
 */
function sharedModelView(model: Model, onGenerate: (record: GenerateRecord) => void): RuntimeModel {
  const engine = model as unknown as RuntimeModel;
  return {
    info: model.info,
    tokenize: (text, options) => model.tokenize(text, options),
    detokenize: (tokens, options) => model.detokenize(tokens, options),
    isEndOfGeneration: (token) => model.isEndOfGeneration(token),
    createContext: async (options) => recordingContext(await model.createContext(options), onGenerate),
    createSharedContext: (options) => (engine.createSharedContext as NonNullable<RuntimeModel['createSharedContext']>).call(model, options),
    ...(engine.jsonSchemaToGrammar ? { jsonSchemaToGrammar: (schema: object) => engine.jsonSchemaToGrammar!.call(model, schema) } : {}),
    dispose: async () => undefined,
  };
}

function recordingContext(inner: InferenceContext, onGenerate: (record: GenerateRecord) => void): InferenceContext {
  return {
    get contextSize() {
      return inner.contextSize;
    },
    get tokens() {
      return inner.tokens;
    },
    get kvBytes() {
      return inner.kvBytes;
    },
    evaluate: (tokens, options) => inner.evaluate(tokens, options),
    generate: async (options: GenerateOptions) => {
      const prompt = options.prompt.slice();
      const result = await inner.generate(options);
      onGenerate({ prompt, result });
      return result;
    },
    scoreNext: (prompt, candidates, options) => inner.scoreNext(prompt, candidates, options),
    saveState: () => inner.saveState(),
    loadState: (bytes, tokens) => inner.loadState(bytes, tokens),
    release: () => inner.release(),
    dispose: () => inner.dispose(),
  };
}

/** SmolLM2 loaded once; `session()` builds registries and sessions on it. */
export class RealModelFixture {
  private readonly registries: ModelRegistry[] = [];
  private readonly sessions: Session[] = [];
  /** Every generate call of every own context, oldest first. */
  readonly ownGenerations: GenerateRecord[] = [];

  private constructor(readonly model: Model) {}

  static async load(name: RealModelName = 'smollm2'): Promise<RealModelFixture> {
    return new RealModelFixture(await loadModel({ path: await realModelPath(name) }));
  }

  /**
   * A created session whose catalog name `smollm2` is the fixture's model, hosted as `entry` says; `catalog` adds
   * entries the registry never loads as models (voices: `purpose: 'tts'`).
   */
  session(entry: Partial<ModelCatalogEntry> = {}, catalog: Record<string, ModelCatalogEntry> = {}): Session {
    const view = sharedModelView(this.model, (record) => this.ownGenerations.push(record));
    const registry = new ModelRegistry({ catalog: { ...catalog, [SMOLLM2]: { ...entry, path: this.model.path } }, loader: async () => view });
    const session = new Session({ registry }).create({ gameName: 'real-model tier' });
    this.registries.push(registry);
    this.sessions.push(session);
    return session;
  }

  async dispose(): Promise<void> {
    for (const session of this.sessions) await session.close();
    for (const registry of this.registries) await registry.disposeAll();
    await this.model.dispose();
  }
}

/** Agent options every real-model agent here shares: the fixture's model, REAL_TEST_THREADS, diagnostics on. */
export const REAL_AGENT = { defaultModel: SMOLLM2, engine: { threads: REAL_TEST_THREADS }, enableDiagnostics: true } as const;

/** A one-node graph: a greedy Generate node. */
export function greedyGenerateGraph(systemPrompt: string, options: { maxTokens?: number; contextSize?: number } = {}) {
  return {
    start: 'answer',
    nodes: [
      {
        name: 'answer',
        type: 'Generate',
        params: { systemPrompt, contextSize: options.contextSize ?? 1024, maxTokens: options.maxTokens ?? 32, temperature: 0 },
      },
    ],
  };
}

/** The diagnostics of the node named `name` in a turn (the last step of it, when the node ran more than once). */
export function nodeDiagnostics(diagnostics: TurnDiagnostics | undefined, name: string): NodeDiagnostics {
  const node = diagnostics?.nodes.filter((candidate) => candidate.name === name).at(-1);
  if (!node) throw new Error(`node "${name}" did not run in this turn (diagnostics on?)`);
  return node;
}
