import { z } from 'zod';
import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import { compileGraph } from '../graph/compile-graph.js';
import type { CompiledGraph, CompiledNode } from '../graph/compiled-graph.js';
import type { GraphNode, NodeDefinition } from '../graph/node-definition.js';
import { nodeCatalog } from '../graph/node-catalog.js';
import { describeFirstIssue } from '../util/validation.js';
import { Agent } from './agent.js';
import { Dialog } from '../dialog/dialog.js';
import { parseAgentOptions, type AgentOptions, type ResolvedAgentOptions } from './agent-options.js';
import { AgentVariables } from './agent-variables.js';
import { engineModelLoader } from '../host/model-loader.js';
import {
  ModelRegistry,
  type ContextPolicy,
  CONTEXT_POLICIES,
  type LoadedModelStatus,
  type ModelCatalogEntry,
  type ModelLease,
  type ModelStats,
} from '../host/model-registry.js';
import type { ModelLoader } from '../host/model-loader.js';
import type { DownloadProgress, DownloadResult } from '../models/model-download.js';
import { NodeCache } from '../host/node-cache.js';
import { inferencePortFor } from '../host/inference-port.js';
import { defaultRuntimeSettings, type RuntimeSettings } from './runtime-settings.js';
import type { StringStorage } from '../knowledge/string-storage.js';
import { StringStorageRegistry } from '../knowledge/string-storage-registry.js';
import type { StringStorageSpec } from '../knowledge/string-storage-spec.js';
import { NodeStorageBindings } from './node-storage-bindings.js';
import { NodeKnowledgeBindings } from './node-knowledge-bindings.js';
import { SessionEmbedders } from './session-embedders.js';
import type { KnowledgeBase } from '../knowledge/knowledge-base.js';
import { KnowledgeBaseRegistry, type KnowledgeBaseCreateOptions, type KnowledgeBaseSpec } from '../knowledge/knowledge-base-registry.js';
import { AudioCache, type AudioCacheStats } from '../voice/audio-cache.js';
import { loadSherpaVoice } from '../voice/sherpa-voice.js';
import { VoiceRegistry } from '../voice/voice-registry.js';
import type { VoiceLoader } from '../voice/tts-voice.js';
import { loadBakedLines } from '../voice/voice-bake.js';
import { AgentVoices, checkSpeaker, type HeldVoice } from './agent-voices.js';
import { SessionVoices, type VoiceLease } from './session-voices.js';

const sessionOptionsSchema = z.strictObject({
  gameName: z.string().min(1).max(256),
  locale: z.string().min(1).max(64).default('en-US'),
  /**
   * Folder storage files are read from (string storages by `path`, node `storage` params naming a file); default the
   * host's `storageRoot`. Without one, no storage file can be read. Paths may not leave it.
   */
  storageRoot: z.string().min(1).max(4096).optional(),
});

/** Options of `session.create` / `createSession`. */
export type SessionOptions = z.input<typeof sessionOptionsSchema>;

/** Host-level settings of a session: where models come from and runtime defaults. */
export interface SessionHostOptions extends Partial<RuntimeSettings> {
  /** Process-wide model registry to share between sessions (default: one shared by every session of the process). */
  registry?: ModelRegistry;
  /** Catalog names → model files, added to the registry. */
  models?: Record<string, ModelCatalogEntry>;
  /** Loader for the default registry (default: the engine's loadModel). Ignored when `registry` is given. */
  loadModel?: ModelLoader;
  /** Node types (default: the built-in catalog). */
  nodeTypes?: ReadonlyMap<string, NodeDefinition>;
  /** Random source for nodes that choose at random (default Math.random). */
  random?: () => number;
  /**
   * Form of the node caches on models whose catalog entry names none (SPEC §2.4): `auto` (default) = a sequence each
   * of a model-wide shared context whose KV is sized to use, batched, wherever the engine can make one (else own
   * contexts); `own` = one context per node cache; `shared` = as auto, with a warning where it falls back. The first
   * load of a model decides.
   */
  contexts?: ContextPolicy;
  /**
   * Storage root for sessions that name none in `create` (the server's: remote clients cannot choose one, so a
   * graph sent over the wire reads only the folder the operator set).
   */
  storageRoot?: string;
  /**
   * Loads a voice folder (catalog entries with `purpose: 'tts'`). Default: the sherpa-onnx engine (loadSherpaVoice),
   * with one VoiceRegistry for the process; a loader given here gets a registry of the session's own. Either way a
   * voice is loaded once and shared by every agent that names it.
   */
  loadVoice?: VoiceLoader;
  /** Byte budget of the session's audio cache of synthesized sentences (default 32 MiB; 0 = no cache). */
  audioCacheBytes?: number;
}

let sharedRegistry: ModelRegistry | undefined;
let sharedVoices: VoiceRegistry | undefined;

/** The registry sessions share when none is given. */
export function defaultModelRegistry(): ModelRegistry {
  sharedRegistry ??= new ModelRegistry({ loader: engineModelLoader });
  return sharedRegistry;
}

type SessionPhase = 'New' | 'Active' | 'Closed';

/**
 * One world of a game: owns agents and storages. Made bare (`new Session(host)`), then `create()`d exactly once;
 * anything before that fails with SessionNotReady. `close()` cancels every turn, destroys every agent and drops the
 * storages; models stay loaded when pinned, on-demand ones are freed once nothing uses them.
 */
export class Session {
  private phase: SessionPhase = 'New';
  private sessionOptions: z.output<typeof sessionOptionsSchema> | undefined;
  private readonly registry: ModelRegistry;
  private readonly settings: RuntimeSettings;
  private readonly nodeTypes: ReadonlyMap<string, NodeDefinition>;
  private readonly random: () => number;
  private readonly contexts: ContextPolicy | undefined;
  private readonly agents = new Map<string, Agent>();
  private readonly hostStorageRoot: string | undefined;
  private storages = new StringStorageRegistry(undefined);
  private readonly embedders: SessionEmbedders;
  private knowledgeBases: KnowledgeBaseRegistry;
  private readonly modelHolds = new Map<string, ModelLease>();
  private readonly voices: SessionVoices;
  private readonly audioCache: AudioCache;
  private agentCounter = 0;

  constructor(host: SessionHostOptions = {}) {
    if (typeof host !== 'object' || host === null) throw new LlamaDialogError('InvalidArgument', 'session host options must be an object');
    this.registry =
      host.registry ?? (host.loadModel ? new ModelRegistry({ loader: host.loadModel }) : defaultModelRegistry());
    for (const [name, entry] of Object.entries(host.models ?? {})) this.registry.define(name, entry);
    this.embedders = new SessionEmbedders(this.registry);
    this.knowledgeBases = new KnowledgeBaseRegistry(undefined, (name) => this.embedders.get(name));
    this.settings = {
      toolCallPauseTimeoutMs: host.toolCallPauseTimeoutMs ?? defaultRuntimeSettings.toolCallPauseTimeoutMs,
      maxInputLength: host.maxInputLength ?? defaultRuntimeSettings.maxInputLength,
      inferenceTimeoutMs: host.inferenceTimeoutMs ?? defaultRuntimeSettings.inferenceTimeoutMs,
      profileDecode: host.profileDecode === true,
    };
    if (!Number.isInteger(this.settings.inferenceTimeoutMs) || this.settings.inferenceTimeoutMs < 0) {
      throw new LlamaDialogError('InvalidArgument', `inferenceTimeoutMs must be a non-negative integer (0 = no limit), got ${String(this.settings.inferenceTimeoutMs)}`);
    }
    this.nodeTypes = host.nodeTypes ?? nodeCatalog;
    this.random = host.random ?? Math.random;
    if (host.contexts !== undefined && !CONTEXT_POLICIES.includes(host.contexts)) {
      throw new LlamaDialogError('InvalidArgument', `contexts must be 'auto', 'own' or 'shared', got ${String(host.contexts)}`);
    }
    this.contexts = host.contexts;
    if (host.storageRoot !== undefined && (typeof host.storageRoot !== 'string' || host.storageRoot.length === 0)) {
      throw new LlamaDialogError('InvalidArgument', 'storageRoot must be a non-empty string (a folder path)');
    }
    this.hostStorageRoot = host.storageRoot;
    const voiceSource = host.loadVoice ? new VoiceRegistry(host.loadVoice) : (sharedVoices ??= new VoiceRegistry(loadSherpaVoice));
    this.voices = new SessionVoices(this.registry, voiceSource);
    this.audioCache = new AudioCache(host.audioCacheBytes);
  }

  /** True between `create()` and `close()`. */
  get active(): boolean {
    return this.phase === 'Active';
  }

  get gameName(): string {
    return this.requireActive().gameName;
  }

  get locale(): string {
    return this.requireActive().locale;
  }

  /**
   * Creates the session (once).
   * @throws LlamaDialogError SessionAlreadyExists (2003) on a second call; InvalidArgument for bad options.
   */
  create(options: SessionOptions): this {
    if (this.phase !== 'New') {
      throw new LlamaDialogError('SessionAlreadyExists', 'this session was already created; open a new one to start over');
    }
    const parsed = sessionOptionsSchema.safeParse(options);
    if (!parsed.success) {
      throw new LlamaDialogError('InvalidArgument', `bad session options: ${describeFirstIssue(parsed.error, 'options')}`, {
        cause: parsed.error,
      });
    }
    this.sessionOptions = parsed.data;
    this.storages = new StringStorageRegistry(parsed.data.storageRoot ?? this.hostStorageRoot);
    this.knowledgeBases = new KnowledgeBaseRegistry(parsed.data.storageRoot ?? this.hostStorageRoot, (name) => this.embedders.get(name));
    this.phase = 'Active';
    return this;
  }

  /** Changes the session's locale. @throws LlamaDialogError SessionNotReady. */
  setLocale(locale: string): void {
    const options = this.requireActive();
    if (typeof locale !== 'string' || locale.length === 0 || locale.length > 64) {
      throw new LlamaDialogError('InvalidArgument', 'locale must be a non-empty string of at most 64 characters');
    }
    options.locale = locale;
  }

  /**
   * Compiles the graph, loads its models and creates the agent's caches (per kvCacheInitialization).
   * @throws LlamaDialogError SessionNotReady; InvalidParamValue (bad options); GraphCompilationFailed (3003);
   * InvalidExitTarget (3008); ModelLoadFailed (4005); for node `storage` params StorageFileNotFound (3010),
   * StoragePathEscape (3009), StorageWrongKind (3011), InvalidStorageData (7003); for speaking graphs VoiceRequired
   * (3013) naming the node when `voice` is missing, VoiceNotFound (4050) for a name that is not a tts catalog entry,
   * InvalidVoice (4051) / TtsEngineUnavailable (4052) from the voice's load, InvalidParamValue for a speakerId the
   * voice lacks; InvalidVoice for a `bakedAudio` file made with another voice.
   */
  async createAgent(options: AgentOptions): Promise<Agent> {
    this.requireActive();
    const resolved = parseAgentOptions(options);
    const graph = compileGraph(resolved.graph, {
      catalog: this.nodeTypes,
      defaultModel: resolved.defaultModel,
      checkModel: (reference) => this.registry.checkOnDisk(reference),
    });
    // Resolved before any model loads: a storage typo should not cost a model load. Later rebinds (changeParam)
    // resolve through the session as it is then.
    const storages = new NodeStorageBindings((reference) => {
      this.requireActive();
      return this.storages.resolveReference(reference);
    });
    storages.bindGraph(graph);
    const knowledge = new NodeKnowledgeBindings((name) => {
      const base = this.knowledgeBases.get(name);
      if (!base) {
        const known = this.knowledgeBases.list().map((item) => item.name);
        throw new LlamaDialogError(
          'GraphCompilationFailed',
          `graph compilation failed: no knowledge base named ${JSON.stringify(name)} in this session (${known.length > 0 ? `known: ${known.join(', ')}` : 'none yet: session.createKnowledgeBase first'})`,
        );
      }
      return base;
    });
    knowledge.bindGraph(graph);
    const voiceNames = this.checkVoices(graph, resolved);
    const variables = new AgentVariables(resolved.variables);
    const leases = new Map<string, ModelLease>();
    const nodeCaches = new Map<string, NodeCache>();
    const voiceLeases = new Map<string, VoiceLease>();
    const cleanup = async (): Promise<void> => {
      await Promise.all([...nodeCaches.values()].map((cache) => cache.dispose()));
      await Promise.all([...leases.values()].map((lease) => lease.release()));
      await Promise.all([...voiceLeases.values()].map((lease) => lease.release()));
    };
    try {
      // Voices before models: a bad voice folder fails before a model load is paid for.
      for (const name of voiceNames) {
        voiceLeases.set(name, await this.voices.acquire(name));
        if (this.phase !== 'Active') throw new LlamaDialogError('SessionNotReady', 'the session closed while the agent was being created');
      }
      const voices = this.agentVoices(resolved, voiceLeases);
      const agentVoice = voices.voice;
      for (const path of resolved.bakedAudio) {
        if (!agentVoice) throw new LlamaDialogError('InvalidParamValue', 'bad agent options: bakedAudio needs a voice');
        await loadBakedLines(path, this.audioCache, agentVoice.voice);
      }
      for (const reference of graph.modelReferences) {
        leases.set(reference, await this.registry.acquire(reference, this.acquireOptions()));
        if (this.phase !== 'Active') throw new LlamaDialogError('SessionNotReady', 'the session closed while the agent was being created');
      }
      this.declareGraphVariables(graph, variables);
      this.agentCounter += 1;
      const id = `agent-${this.agentCounter}`;
      for (const node of graph.nodes.values()) {
        if (!node.modelReference) continue;
        const lease = leases.get(node.modelReference) as ModelLease;
        nodeCaches.set(node.name, this.createNodeCache(node, lease, resolved, id));
      }
      const nodes = new Map<string, GraphNode>();
      for (const node of graph.nodes.values()) nodes.set(node.name, node.definition.create(node));
      const dialog = new Dialog({ limits: { maxUserLineChars: this.settings.maxInputLength, maxSlotChars: this.settings.maxInputLength } });
      const agent = new Agent({
        id,
        graph,
        nodes,
        nodeCaches,
        leases: [...leases.values()],
        options: resolved,
        settings: this.settings,
        variables,
        dialog,
        random: this.random,
        storages,
        knowledge,
        voices,
        acquireVoice: (name) => this.voices.acquire(name),
        onDestroyed: (destroyed) => this.agents.delete(destroyed.id),
      });
      if (resolved.kvCacheInitialization !== 'DeferAllocation') {
        await Promise.all([...nodeCaches.values()].map((cache) => cache.get()));
      }
      if (resolved.kvCacheInitialization === 'Prefill') await this.prefill(graph, nodes, nodeCaches, variables, resolved.maintainDialogueHistory);
      if (this.phase !== 'Active') {
        await agent.destroy();
        throw new LlamaDialogError('SessionNotReady', 'the session closed while the agent was being created');
      }
      this.agents.set(id, agent);
      return agent;
    } catch (error) {
      await cleanup();
      throw error;
    }
  }

  /** @throws LlamaDialogError SessionNotReady; InvalidAgentId (3001) for an id this session does not know. */
  getAgent(id: string): Agent {
    this.requireActive();
    const agent = this.agents.get(id);
    if (!agent) throw new LlamaDialogError('InvalidAgentId', `no agent "${id}" in this session`);
    return agent;
  }

  /** Agents alive in this session. */
  listAgents(): Agent[] {
    this.requireActive();
    return [...this.agents.values()];
  }

  /** Cancels the agent's turn and destroys it. @throws LlamaDialogError SessionNotReady; InvalidAgentId. */
  async destroyAgent(id: string): Promise<void> {
    await this.getAgent(id).destroy();
  }

  /**
   * Loads a model ahead of time (warm-up) and keeps it for this session; `pinned` keeps it loaded for the process
   * even after the session closes.
   * @throws LlamaDialogError SessionNotReady; ModelLoadFailed.
   */
  async loadModel(name: string, options: { pinned?: boolean } = {}): Promise<LoadedModelStatus> {
    this.requireActive();
    if (!this.modelHolds.has(name)) {
      const lease = await this.registry.acquire(name, { pin: options.pinned, ...this.acquireOptions() });
      if (this.modelHolds.has(name)) await lease.release();
      else this.modelHolds.set(name, lease);
    } else if (options.pinned) {
      await this.registry.setPinned(name, true);
    }
    const path = this.registry.resolve(name).path;
    return this.registry.status().find((status) => status.name === name || status.path.endsWith(path)) as LoadedModelStatus;
  }

  /**
   * Downloads a model into the cache before its first load: a catalog name with a `url`, or an address
   * (`http(s)://...`, `hf:<owner>/<repo>/<file>`). Resumes a partial download; skips a file already in place.
   * @throws LlamaDialogError SessionNotReady; InvalidArgument; ModelNotFound; NotGguf; DiskFull; ChecksumMismatch;
   *   ModelDownloadFailed.
   */
  async downloadModel(name: string, options: { sha256?: string; onProgress?: (progress: DownloadProgress) => void } = {}): Promise<DownloadResult> {
    this.requireActive();
    return this.registry.download(name, options);
  }

  /**
   * Gives back this session's hold on a model and unpins it; it is freed once no agent uses it.
   * @throws LlamaDialogError SessionNotReady.
   */
  async unloadModel(name: string): Promise<void> {
    this.requireActive();
    const lease = this.modelHolds.get(name);
    this.modelHolds.delete(name);
    await this.registry.setPinned(name, false);
    await lease?.release();
  }

  /**
   * KV memory of a loaded model, read from the engine objects: live KV bytes and snapshot bytes now and at peak,
   * evictions, restores, dropped snapshots, its form and scheduling. undefined when the model is not loaded.
   * @throws LlamaDialogError SessionNotReady.
   */
  modelStats(name: string): ModelStats | undefined {
    this.requireActive();
    return this.registry.modelStats(name);
  }

  /** Models loaded in the process. @throws LlamaDialogError SessionNotReady. */
  listModels(): LoadedModelStatus[] {
    this.requireActive();
    return this.registry.status();
  }

  /**
   * Creates a named string storage for this session, which node `storage` params can then name. Exactly one source:
   * `{ name, strings }` (a list), `{ name, kind: 'map' | 'multimap', entries: [{ id, text }] }`, or `{ name, path }`
   * (a `.txt` list, `.json` map or `.mm.json` multimap under the storage root; `kind`, if given, must match).
   * Files are at most 16 MiB, UTF-8.
   * @throws LlamaDialogError SessionNotReady; InvalidArgument (bad shape); InvalidStorageName (7001);
   *   DuplicateStorageName (7002); InvalidStorageData (7003); StorageNameShadowsFile (7004); StoragePathEscape
   *   (3009); StorageFileNotFound (3010); StorageWrongKind (3011).
   */
  createStringStorage(spec: StringStorageSpec): StringStorage {
    this.requireActive();
    return this.storages.create(spec);
  }

  /** @throws LlamaDialogError SessionNotReady; StorageFileNotFound (3010) for a name this session does not have. */
  getStringStorage(name: string): StringStorage {
    this.requireActive();
    const storage = this.storages.get(name);
    if (!storage) throw new LlamaDialogError('StorageFileNotFound', `no string storage named "${String(name)}" in this session`);
    return storage;
  }

  /** The session's named string storages. @throws LlamaDialogError SessionNotReady. */
  listStringStorages(): StringStorage[] {
    this.requireActive();
    return this.storages.list();
  }

  /**
   * Drops the session's name for a storage; agents whose nodes already use it keep it for their life. Returns false
   * when there was no storage of that name.
   * @throws LlamaDialogError SessionNotReady.
   */
  destroyStringStorage(name: string): boolean {
    this.requireActive();
    return this.storages.destroy(name);
  }

  /**
   * Creates a named knowledge base: records embedded once by a catalog embedding model, searched by Retrieve and
   * ClassifyIntent nodes through their `store` param. Exactly one source: `{ name, configPath }` (a config JSON under
   * the storage root naming its embedding model, records file and index file), `{ name, records, fields?,
   * embeddingModel }` or `{ name, strings, embeddingModel }` (in memory). `onProgress` reports the embedding.
   * @throws LlamaDialogError SessionNotReady; InvalidKnowledgeBaseName (8001); DuplicateKnowledgeBaseName (8002);
   *   InvalidKnowledgeBase (8003); StoragePathEscape (3009); StorageFileNotFound (3010); ModelLoadFailed; Aborted.
   */
  async createKnowledgeBase(spec: KnowledgeBaseSpec, options: KnowledgeBaseCreateOptions = {}): Promise<KnowledgeBase> {
    this.requireActive();
    const base = await this.knowledgeBases.create(spec, options);
    if (this.phase !== 'Active') {
      this.knowledgeBases.destroy(base.name);
      throw new LlamaDialogError('SessionNotReady', 'the session closed while the knowledge base was being built');
    }
    return base;
  }

  /** @throws LlamaDialogError SessionNotReady; InvalidKnowledgeBaseName (8001) for a name this session does not have. */
  getKnowledgeBase(name: string): KnowledgeBase {
    this.requireActive();
    const base = this.knowledgeBases.get(name);
    if (!base) throw new LlamaDialogError('InvalidKnowledgeBaseName', `no knowledge base named ${JSON.stringify(String(name))} in this session`);
    return base;
  }

  /** @throws LlamaDialogError SessionNotReady. */
  listKnowledgeBases(): KnowledgeBase[] {
    this.requireActive();
    return this.knowledgeBases.list();
  }

  /**
   * Drops the session's name for a knowledge base; agents whose nodes already use it keep it for their life. Returns
   * false when there was none of that name.
   * @throws LlamaDialogError SessionNotReady.
   */
  destroyKnowledgeBase(name: string): boolean {
    this.requireActive();
    return this.knowledgeBases.destroy(name);
  }

  /** Catalog names of the voices (`purpose: 'tts'`). @throws LlamaDialogError SessionNotReady. */
  listVoices(): string[] {
    this.requireActive();
    return this.voices.catalogNames();
  }

  /**
   * Loads a `.voicebake` file (`llama-dialog voice bake`) into the session's audio cache for the named voice: its
   * sentences are then spoken with no synthesis. Returns how many clips were loaded.
   * @throws LlamaDialogError SessionNotReady; VoiceNotFound; InvalidVoice (a bake made with another voice, or not a
   *   bake); the voice's load errors; the file system's errors (ENOENT, ...).
   */
  async loadBakedAudio(path: string, options: { voice: string }): Promise<number> {
    this.requireActive();
    const lease = await this.voices.acquire(options.voice);
    try {
      return await loadBakedLines(path, this.audioCache, lease.voice);
    } finally {
      await lease.release();
    }
  }

  /** Counters of the session's audio cache (hits, misses, bytes). @throws LlamaDialogError SessionNotReady. */
  audioCacheStats(): AudioCacheStats {
    this.requireActive();
    return this.audioCache.stats();
  }

  /** Catalog names of the embedding models (`purpose: 'embedding'`). @throws LlamaDialogError SessionNotReady. */
  listEmbeddingModels(): string[] {
    this.requireActive();
    return this.embedders.catalogNames();
  }

  /**
   * Cancels every running turn, destroys every agent, drops storages and this session's model holds. Idempotent;
   * afterwards every call fails with SessionNotReady.
   */
  async close(): Promise<void> {
    if (this.phase === 'Closed') return;
    this.phase = 'Closed';
    const agents = [...this.agents.values()];
    this.agents.clear();
    await Promise.all(agents.map((agent) => agent.destroy()));
    this.storages.clear();
    this.knowledgeBases.clear();
    await this.embedders.close();
    const holds = [...this.modelHolds.values()];
    this.modelHolds.clear();
    await Promise.all(holds.map((lease) => lease.release()));
    this.audioCache.clear();
  }

  private requireActive(): z.output<typeof sessionOptionsSchema> {
    if (this.phase === 'New') throw new LlamaDialogError('SessionNotReady', 'create the session first (session.create / createSession)');
    if (this.phase === 'Closed' || !this.sessionOptions) throw new LlamaDialogError('SessionNotReady', 'this session is closed');
    return this.sessionOptions;
  }

  private acquireOptions(): { defaults: { contexts?: ContextPolicy } } {
    return { defaults: this.contexts === undefined ? {} : { contexts: this.contexts } };
  }

  private createNodeCache(node: CompiledNode, lease: ModelLease, options: ResolvedAgentOptions, agentId: string): NodeCache {
    const { name: nodeName, params, definition } = node;
    const trained = lease.model.info.trainedContextSize;
    const requested = typeof params.contextSize === 'number' ? params.contextSize : 0;
    const contextSize = requested > 0 ? requested : trained;
    const problem = definition.checkSizes?.(params, { contextSize });
    if (problem) throw new LlamaDialogError('GraphCompilationFailed', `graph compilation failed: node "${nodeName}": ${problem}`);
    return new NodeCache(lease, contextSize, options.engine, { agentId, node: nodeName });
  }

  /**
   * The voices the agent needs (its own first, then the nodes' `ttsModel`s), checked before anything loads.
   * @throws LlamaDialogError VoiceRequired naming the first speaking node when there is no voice; VoiceNotFound.
   */
  private checkVoices(graph: CompiledGraph, options: ResolvedAgentOptions): string[] {
    const names = new Set<string>();
    if (options.voice) names.add(options.voice.model);
    for (const node of graph.nodes.values()) {
      const speaks = node.definition.speaks;
      if (!speaks) continue;
      if (!options.voice) {
        throw new LlamaDialogError(
          'VoiceRequired',
          `${node.type} node "${node.name}" speaks, but the agent has no voice: pass createAgent({ voice: { model: <a tts catalog name> } })` +
            ` (voices: ${this.voices.catalogNames().join(', ') || 'none'})`,
        );
      }
      const own = speaks.ttsModel(node.params);
      if (own !== undefined) names.add(own);
    }
    for (const name of names) this.voices.folderOf(name);
    return [...names];
  }

  private agentVoices(options: ResolvedAgentOptions, leases: ReadonlyMap<string, VoiceLease>): AgentVoices {
    let held: HeldVoice | undefined;
    if (options.voice) {
      const lease = leases.get(options.voice.model) as VoiceLease;
      checkSpeaker(options.voice.speakerId, lease, 'voice');
      held = { profile: { ...options.voice }, lease };
    }
    const nodeVoices = new Map([...leases].filter(([name]) => name !== options.voice?.model));
    return new AgentVoices(held, nodeVoices, options.deliveryMode, this.audioCache);
  }

  private declareGraphVariables(graph: CompiledGraph, variables: AgentVariables): void {
    for (const node of graph.nodes.values()) {
      for (const name of node.definition.writesVariables?.(node.params) ?? []) {
        try {
          variables.declare(name, '');
        } catch (error) {
          if (!isLlamaDialogError(error)) throw error;
          throw new LlamaDialogError(
            'GraphCompilationFailed',
            `graph compilation failed: node "${node.name}" writes variable "${name}", which is declared with a type other than string`,
          );
        }
      }
    }
  }

  private async prefill(
    graph: CompiledGraph,
    nodes: ReadonlyMap<string, GraphNode>,
    nodeCaches: ReadonlyMap<string, NodeCache>,
    variables: AgentVariables,
    maintainDialogueHistory: boolean,
  ): Promise<void> {
    for (const [name, node] of nodes) {
      const cache = nodeCaches.get(name);
      if (!cache || !node.prefill) continue;
      await node.prefill({
        params: (graph.nodes.get(name) as { params: Readonly<Record<string, unknown>> }).params,
        variables,
        maintainDialogueHistory,
        inference: inferencePortFor(cache),
      });
    }
  }
}

/**
 * Creates and starts a session in one call: `new Session(host).create(options)`.
 * @throws LlamaDialogError InvalidArgument for bad options.
 */
export function createSession(options: SessionOptions, host: SessionHostOptions = {}): Session {
  return new Session(host).create(options);
}
