import type { Agent } from '../agent/agent.js';
import { Session } from '../agent/session.js';
import { loadModel } from '../engine/load-model.js';
import type { KvLayout } from '../engine/types.js';
import { LlamaDialogError } from '../errors.js';
import { ModelRegistry, type ModelCatalogEntry } from '../host/model-registry.js';
import { benchGraph } from './bench-graph.js';
import { nodeMetrics } from './diagnostics-metrics.js';
import { KvMeter, type KvBytes } from './kv-meter.js';
import type { TavernLineOutcome, TavernStrategy } from './tavern-runner.js';
import type { TavernLineRecord } from './tavern-result.js';
import type { TavernScene } from './tavern-scene.js';

/** The tavern strategies that run on this package's runtime. */
export type TavernAgentStrategyName = 'fifo' | 'batched' | 'batched-no-spawn' | 'defaults';

/** The catalog fields each strategy sets on the model (SPEC §2.4, §6). */
export type TavernCatalogSettings = Pick<ModelCatalogEntry, 'scheduling' | 'contexts' | 'sharedPrefixSpawn' | 'kvLayout' | 'kvReservation'>;

/**
 * `batched` and `batched-no-spawn` reserve a sequence per agent up front, as the shared form did before its KV was
 * sized to use, so that `defaults` (nothing set: what a user gets) is compared with the tuned form it replaces.
 */
export const TAVERN_CATALOG_SETTINGS: Readonly<Record<TavernAgentStrategyName, TavernCatalogSettings>> = {
  fifo: { scheduling: 'fifo', contexts: 'own' },
  batched: { scheduling: 'batched', contexts: 'shared', kvReservation: 'upFront' },
  'batched-no-spawn': { scheduling: 'batched', contexts: 'shared', kvReservation: 'upFront', sharedPrefixSpawn: false },
  defaults: {},
};

/** What the library's defaults become on an engine with shared contexts (contexts 'auto'). */
const DEFAULT_FORM = { scheduling: 'batched', contexts: 'shared' } as const;

const DESCRIPTIONS: Record<TavernAgentStrategyName, string> = {
  fifo: 'llama-dialog, reference server rule: one inference at a time per model, first come first served, own context per agent',
  batched: 'llama-dialog, continuous batching over sequences of one shared context (a sequence per agent reserved up front), shared-prefix spawn',
  'batched-no-spawn': 'llama-dialog, continuous batching over sequences of one shared context, every agent decodes its own lore',
  defaults: 'llama-dialog with nothing set (contexts auto: one shared context sized to use, batched, shared-prefix spawn)',
};

/** Catalog name the strategy gives its model. */
const MODEL_NAME = 'tavern';

export interface TavernAgentStrategyOptions {
  name: TavernAgentStrategyName;
  modelPath: string;
  /** KV tokens per agent. */
  contextSize: number;
  maxTokens: number;
  threads: number;
  /** Layers to offload (engine default when absent). */
  gpuLayers?: number;
  /** Tokens per llama_decode batch (default 512). */
  batchSize?: number;
  /** KV layout of the shared context (batched strategies; default unified). */
  kvLayout?: KvLayout;
  /** Record every engine step of every generation (returned with each line's outcome as `decodeSteps`). */
  profile?: boolean;
}

/**
 * The tavern on this package's agent runtime: one session, one agent per NPC, one Generate node each (greedy, the
 * agent's system prompt), the model declared in the session's catalog with the strategy's scheduling and context
 * settings. Figures come from each turn's diagnostics; KV bytes from the engine's contexts (see KvMeter).
 *
 * A setting this build does not honour fails the strategy instead of letting it run as something else:
 * the scheduler must report the requested policy, `contexts: 'shared'` must create a shared context and no own
 * one, and with `sharedPrefixSpawn: false` no agent's first turn may reuse tokens it never decoded.
 */
export class TavernAgentStrategy implements TavernStrategy {
  readonly name: TavernAgentStrategyName;
  readonly description: string;
  /** The catalog fields it sets (known once the scene is: the shared context has a sequence per agent). */
  settings: Record<string, string | number | boolean>;
  readonly notes: string[] = [];
  private readonly options: TavernAgentStrategyOptions;
  private readonly catalog: TavernCatalogSettings;
  private readonly meter = new KvMeter();
  private session: Session | undefined;
  private agents: Agent[] = [];

  constructor(options: TavernAgentStrategyOptions) {
    this.options = options;
    this.name = options.name;
    this.description = DESCRIPTIONS[options.name];
    const catalog = TAVERN_CATALOG_SETTINGS[options.name];
    this.catalog = catalog.contexts === 'shared' && options.kvLayout !== undefined ? { ...catalog, kvLayout: options.kvLayout } : catalog;
    this.settings = { ...this.catalog };
  }

  async prepare(scene: TavernScene): Promise<void> {
    const { modelPath, contextSize, maxTokens, threads, gpuLayers } = this.options;
    // A shared context sized for the scene's agents, as a game would size it: one sequence id per NPC (llama.cpp's
    // limit is 256), so its KV allocation equals that of one own context per agent.
    const sequences: { sequences?: number } =
      this.catalog.contexts === 'shared' ? { sequences: Math.min(256, scene.agents.length) } : {};
    this.settings = { ...this.catalog, ...sequences };
    const entry: ModelCatalogEntry = { path: modelPath, ...(gpuLayers === undefined ? {} : { gpuLayers }), ...this.catalog, ...sequences };
    const registry = new ModelRegistry({
      loader: async (load) => this.meter.wrap(await loadModel(load)),
      catalog: { [MODEL_NAME]: entry },
    });
    const lease = await registry.acquire(MODEL_NAME);
    try {
      const policy = (lease.scheduler as { policy?: unknown } | undefined)?.policy;
      const expected = this.catalog.scheduling ?? DEFAULT_FORM.scheduling;
      if (policy !== expected) {
        throw new LlamaDialogError(
          'InvalidArgument',
          `this build does not support scheduling '${expected}' (the model's scheduler runs ` +
            `${policy === undefined ? 'no known policy' : `'${String(policy)}'`}); the strategy needs the batched engine (SPEC §2.4)`,
        );
      }
      this.session = new Session({ registry, profileDecode: this.options.profile === true }).create({ gameName: `llama-dialog bench tavern (${this.name})` });
      for (const agent of scene.agents) {
        this.agents.push(
          await this.session.createAgent({
            graph: benchGraph({ systemPrompt: agent.systemPrompt, contextSize, maxTokens, summarize: null }, { trimTargetRatio: 0.75 }),
            defaultModel: MODEL_NAME,
            enableDiagnostics: true,
            kvCacheInitialization: 'AllocateOnly',
            engine: { threads, batchSize: this.options.batchSize ?? 512 },
          }),
        );
      }
    } finally {
      await lease.release();
    }
    this.checkContextForm({ sceneDone: false });
  }

  async runLine(agentIndex: number, text: string, onFirstToken: () => void): Promise<TavernLineOutcome> {
    const agent = this.agents[agentIndex];
    if (!agent) throw new LlamaDialogError('InvalidArgument', `no agent ${agentIndex} (prepare() first)`);
    const turn = agent.sendMessage(text);
    for await (const event of turn) {
      if (event.type === 'answerText' && event.text !== '') onFirstToken();
    }
    const complete = await turn;
    if (complete.status !== 'Success') {
      throw new LlamaDialogError('InferenceFailed', `agent ${agentIndex}'s turn ended ${complete.status}`, { cause: complete.error });
    }
    if (!complete.diagnostics) throw new LlamaDialogError('InferenceFailed', `agent ${agentIndex}'s turn has no diagnostics`);
    const nodes = complete.diagnostics.nodes.flatMap((node) => nodeMetrics(node));
    return {
      generatedTokens: complete.tokensGenerated,
      evaluatedTokens: nodes.reduce((total, node) => total + node.evaluatedTokens, 0),
      reusedTokens: nodes.reduce((total, node) => total + node.reusedTokens, 0),
      ...(this.options.profile ? { decodeSteps: nodes.flatMap((node) => node.decodeSteps ?? []) } : {}),
    };
  }

  kvBytes(): KvBytes {
    return this.meter.bytes();
  }

  verify(lines: readonly TavernLineRecord[]): void {
    this.checkContextForm({ sceneDone: true });
    const firstTurns = lines.filter((line) => line.lineOfAgent === 0);
    const spawned = firstTurns.filter((line) => (line.reusedTokens ?? 0) > 0);
    if (this.catalog.sharedPrefixSpawn === false && spawned.length > 0) {
      const example = spawned[0] as TavernLineRecord;
      throw new LlamaDialogError(
        'InvalidArgument',
        `sharedPrefixSpawn: false was not honoured: agent ${example.agent}'s first turn reused ${example.reusedTokens} ` +
          `tokens it never decoded (${spawned.length} of ${firstTurns.length} agents)`,
      );
    }
    if ((this.catalog.contexts ?? DEFAULT_FORM.contexts) === 'shared') {
      this.notes.push(`${this.name}: ${spawned.length} of ${firstTurns.length} agents started from another agent's prefix (first turn reused > 0 tokens)`);
    }
  }

  async dispose(): Promise<void> {
    await this.session?.close();
    this.session = undefined;
    this.agents = [];
  }

  /**
   * `contexts: 'shared'` must never create an own context, and must have created a shared one by the end of the scene
   * (a host may create it on the first turn rather than with the agents).
   */
  private checkContextForm(options: { sceneDone: boolean }): void {
    const { ownContextsCreated: own, sharedContextsCreated: shared } = this.meter;
    if ((this.catalog.contexts ?? DEFAULT_FORM.contexts) === 'shared' && (own > 0 || (options.sceneDone && shared === 0))) {
      throw new LlamaDialogError(
        'InvalidArgument',
        `this build does not support contexts: 'shared': the host created ${own} own context(s) and ${shared} shared one(s)`,
      );
    }
  }
}
