import { existsSync, statSync } from 'node:fs';
import { basename, join, resolve as resolvePath } from 'node:path';
import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import { modelCacheDir } from '../models/model-cache.js';
import { checkSha256, downloadModel, type DownloadProgress, type DownloadResult } from '../models/model-download.js';
import { isModelUrl, parseModelUrl } from '../models/model-url.js';
import { KV_LAYOUTS, type KvCacheType, type KvLayout, type RuntimeModel, type SharedInferenceContext } from '../engine/types.js';
import { estimateKvBytesPerCell } from './kv-memory.js';
import { KvSnapshotPool, type KvPoolStats } from './kv-snapshot-pool.js';
import type { ModelLoader } from './model-loader.js';
import { SCHEDULING_POLICIES, createModelScheduler, type ModelScheduler, type SchedulingPolicy } from './model-scheduler.js';

/**
 * The physical form of the node caches of every agent on one model (SPEC §2.4): `own` = one llama_context per node
 * cache; `shared` = one sequence each of ONE model-wide shared context (continuous batching, shared-prefix spawn),
 * whose KV cache is sized to use; `auto` (the default) = `shared` wherever the engine can create a shared context,
 * else `own`, without a warning (docs/NOTES.md, "Many NPCs by default").
 */
export type ContextPolicy = 'auto' | 'own' | 'shared';
export const CONTEXT_POLICIES = ['auto', 'own', 'shared'] as const;
/** The form a model's node caches take once its policy met the engine: `auto` has become one of these. */
export type ContextForm = 'own' | 'shared';

/**
 * When a shared context takes its KV memory: `onDemand` (default) = it starts at the first node cache's contextSize
 * and doubles when a step finds no free cell, up to the cap (sharedContextSize, or what kvMemoryBudget holds,
 * or sequences × contextSize), shrinking back when sequences leave; `upFront` = the whole cap at creation (the form
 * of earlier versions, for comparisons). `perSequence` KV is always `upFront`.
 */
export type KvReservation = 'onDemand' | 'upFront';
export const KV_RESERVATIONS = ['onDemand', 'upFront'] as const;

/** Sequence ids of a shared context when the catalog names none. */
export const DEFAULT_SHARED_SEQUENCES = 16;

/**
 * Shortest common prefix (tokens) worth a shared-prefix spawn: below it the copy saves less than one small decode
 * batch costs, and the new sequence would share cells with its source for nothing (a short system prompt, a
 * template header).
 */
export const DEFAULT_MIN_SHARED_PREFIX = 32;

export type ModelPurpose = 'generation' | 'embedding' | 'tts';
export const MODEL_PURPOSES = ['generation', 'embedding', 'tts'] as const;

/** One model the registry knows by name: a file on disk (`path`), or one to download (`url`). */
export interface ModelCatalogEntry {
  /**
   * What the model is for: `generation` (default: graph nodes run it), `embedding` (knowledge bases and
   * ClassifyIntent embed with it; `createKnowledgeBase` names it by its catalog name) or `tts` (a voice: `path` is
   * the folder `llama-dialog voice import` wrote, named by an agent's `voice.model` or a node's `ttsModel`; the
   * registry never loads it, the session's voice loader does).
   */
  purpose?: ModelPurpose;
  /** Embedding models: the pooling ('model' = what the GGUF declares; a text-generation model needs 'mean' or 'last'). */
  pooling?: 'model' | 'mean' | 'cls' | 'last';
  /**
   * GGUF file on disk. With `url`: where the download goes (default: the URL's file name in the model cache,
   * modelCacheDir()). Required without `url`.
   */
  path?: string;
  /**
   * Where to download the model from when its file is missing: `http(s)://...` or `hf:<owner>/<repo>/<file>`. The
   * first load downloads it (resumable, see downloadModel); so does a DownloadModel request ahead of time.
   */
  url?: string;
  /** Expected sha256 of the file (hex), checked after the download and once per process before the first load. */
  sha256?: string;
  /** Pinned models stay loaded once loaded; on-demand ones are freed as soon as nothing uses them. Default false. */
  pinned?: boolean;
  /** Layers to offload to the GPU (engine default when omitted). */
  gpuLayers?: number;
  useMmap?: boolean;
  /**
   * How the agents on this model share it: `batched` (default wherever the node caches are sequences of a shared
   * context: every job starts at once and the engine batches their decodes) or `fifo` (one inference at a time, first
   * come first served: the reference's rule, and the default on own contexts).
   */
  scheduling?: SchedulingPolicy;
  /**
   * Form of the node caches on this model (default: the session's `contexts`, else `auto`). `shared` falls back to
   * `own`, with a warning, when the model cannot create a shared context; `auto` does so silently.
   */
  contexts?: ContextPolicy;
  /** Sequence ids of the shared context (default 16). */
  sequences?: number;
  /**
   * The cap on the KV cells of the shared context. Default (the sizing rule): floor(kvMemoryBudget / KV bytes per
   * cell) when a budget is set, else sequences × the contextSize of the first node cache that needs it. With
   * `kvReservation: 'onDemand'` (default) the cache only grows to it as its sequences need cells.
   */
  sharedContextSize?: number;
  /** When the shared context takes its KV memory (see KvReservation; default `onDemand`). */
  kvReservation?: KvReservation;
  /**
   * KV layout of the shared context (see KvLayout). Default `unified`: in the tavern benchmark it was as fast or
   * faster (docs/NOTES.md). `perSequence` needs sharedContextSize / sequences ≥ every node cache's contextSize.
   */
  kvLayout?: KvLayout;
  /** Shortest common prefix (tokens) a new sequence copies from a live one (default 32). */
  minSharedPrefix?: number;
  /** Whether a new sequence may start from a copy of a live one's prefix at all (default true; off for comparisons). */
  sharedPrefixSpawn?: boolean;
  /**
   * Bytes of live KV memory allowed on this model (all its contexts or sequences together); idle caches beyond it are
   * saved to RAM and freed, least recently used first (kv-snapshot-pool.ts). Default: unlimited.
   */
  kvMemoryBudget?: number;
  /** Bytes of KV snapshots kept in RAM; oldest dropped beyond it. Default 4 × kvMemoryBudget (unlimited without one). */
  snapshotMemoryBudget?: number;
}

/** Defaults a holder asks for when the catalog entry names none (the first load of the model decides). */
export interface ModelHostingDefaults {
  contexts?: ContextPolicy;
}

/** What a benchmark reads about one loaded model's KV memory (from the engine objects). */
export interface ModelStats extends KvPoolStats {
  name: string;
  /** The form the node caches take (what `policy` became on this engine). */
  contexts: ContextForm;
  /** The form asked for (catalog, else session, else `auto`). */
  policy: ContextPolicy;
  scheduling: SchedulingPolicy;
  /** The shared context, when one exists. */
  sharedContext: {
    sequences: number;
    /** KV cells reserved now (the same as cellsReserved; kept for earlier readers). */
    contextSize: number;
    /** KV cells reserved now: a cache sized to use grows and shrinks. */
    cellsReserved: number;
    /** The most cells it may grow to. */
    cellsCap: number;
    /** How many times it grew or shrank. */
    resizes: number;
    kvReservation: KvReservation;
    kvLayout: KvLayout;
    sequenceContextSize: number;
    liveSequences: number;
    /** Cells held by live sequences (a prefix shared by several counts once per sequence). */
    cellsUsed: number;
    kvBytesPerCell: number;
  } | null;
}

/** What the registry reports about a loaded model. */
export interface LoadedModelStatus {
  name: string;
  path: string;
  pinned: boolean;
  /** Holders (agents, explicit loads) currently using it. */
  users: number;
}

/** A catalog entry with its file path decided (the download target of a `url` entry). */
type ResolvedCatalogEntry = ModelCatalogEntry & { path: string };

interface RegistryEntry {
  name: string;
  path: string;
  pinned: boolean;
  users: number;
  loading: Promise<RuntimeModel>;
  model: RuntimeModel | undefined;
  scheduler: ModelScheduler;
  spec: ResolvedCatalogEntry;
  policy: ContextPolicy;
  /** What `policy` became: decided at load (`own` when the model has no createSharedContext). */
  contexts: ContextForm;
  pool: KvSnapshotPool;
  shared: SharedInferenceContext | undefined;
  creatingShared: Promise<SharedInferenceContext> | undefined;
}

/**
 * A model in use. Holding a lease keeps the model loaded; `release()` gives it back (idempotent). Inference on the
 * model goes through `scheduler`, shared by every lease of the same model (its policy comes from the catalog).
 */
export interface ModelLease {
  readonly name: string;
  /** Resolved file path: the model's identity inside this process. */
  readonly path: string;
  /**
   * The model's name as it goes into dialogs and save games: its catalog name, or the file name for a model given by
   * path. Never the absolute path, so a snapshot holds no machine paths and moves between machines.
   */
  readonly id: string;
  readonly model: RuntimeModel;
  readonly scheduler: ModelScheduler;
  /** Form of the node caches on this model (already resolved: `shared` only when the model supports it). */
  readonly contexts: ContextForm;
  /** The model's KV budget and snapshots, shared by every node cache on it. */
  readonly pool: KvSnapshotPool;
  /** Shortest common prefix a new sequence copies (shared form). */
  readonly minSharedPrefix: number;
  /**
   * The model-wide shared context, created on first need with the sizing rule (ModelCatalogEntry.sharedContextSize)
   * and the engine settings of the first node cache that asks; disposed when the model is freed.
   */
  sharedContext(first: { contextSize: number; batchSize?: number; threads?: number; kvCacheType?: KvCacheType }): Promise<SharedInferenceContext>;
  /** KV bytes per cell of the shared context (the engine's figure once it exists, the estimate before). */
  sharedKvBytesPerCell(kvCacheType?: KvCacheType): number;
  release(): Promise<void>;
}

/**
 * Process-wide set of loaded models, shared by every session. A model is loaded once however many agents use it;
 * it is keyed by its resolved file path, so a catalog name and the same path share one instance.
 */
export class ModelRegistry {
  private readonly catalog = new Map<string, ResolvedCatalogEntry>();
  /** Files of `url` entries whose sha256 was checked in this process (hashing a big file on every load would cost seconds). */
  private readonly verified = new Set<string>();
  private readonly loaded = new Map<string, RegistryEntry>();
  private readonly loader: ModelLoader;
  private readonly warn: (message: string) => void;

  constructor(options: {
    loader: ModelLoader;
    catalog?: Record<string, ModelCatalogEntry>;
    /** Where hosting warnings go (a `shared` model that falls back to `own`); default process.emitWarning. */
    warn?: (message: string) => void;
  }) {
    this.loader = options.loader;
    this.warn = options.warn ?? ((message) => process.emitWarning(message, { code: 'LLAMA_DIALOG_HOSTING' }));
    for (const [name, entry] of Object.entries(options.catalog ?? {})) this.define(name, entry);
  }

  /**
   * Adds or replaces a catalog name. Affects models loaded afterwards only.
   * @throws LlamaDialogError InvalidArgument for an entry with neither `path` nor `url`, a bad `url` or `sha256`.
   */
  define(name: string, entry: ModelCatalogEntry): void {
    if (!name) throw new LlamaDialogError('InvalidArgument', 'model name must be a non-empty string');
    checkHostingFields(name, entry);
    this.catalog.set(name, resolveCatalogEntry(name, entry));
  }

  /** The catalog entry a reference means: a catalog name, else the reference taken as a file path. */
  resolve(reference: string): ResolvedCatalogEntry {
    return this.catalog.get(reference) ?? { path: reference };
  }

  /** The catalog: every name with its entry (path decided). */
  catalogEntries(): { name: string; entry: Readonly<ModelCatalogEntry> & { path: string } }[] {
    return [...this.catalog].map(([name, entry]) => ({ name, entry }));
  }

  /** True when the catalog has this name. */
  hasCatalogName(name: string): boolean {
    return this.catalog.has(name);
  }

  /**
   * Downloads a model into the cache ahead of its first load: a catalog name with a `url` (into its `path`), or an
   * address (`http(s)://`, `hf:`) into the model cache. `sha256` overrides the catalog's.
   * @throws LlamaDialogError InvalidArgument for a name without `url`; the download's errors (see downloadModel).
   */
  async download(reference: string, options: { sha256?: string; onProgress?: (progress: DownloadProgress) => void } = {}): Promise<DownloadResult> {
    const entry = this.catalog.get(reference);
    if (entry?.url === undefined && !isModelUrl(reference)) {
      throw new LlamaDialogError(
        'InvalidArgument',
        entry
          ? `model "${reference}" has no url in the catalog to download it from (it is the file ${entry.path})`
          : `"${reference}" is neither a catalog model with a url nor an address (http(s)://... or hf:<owner>/<repo>/<file>)`,
      );
    }
    const sha256 = options.sha256 ?? entry?.sha256;
    const result = await downloadModel({
      url: entry?.url ?? reference,
      ...(entry ? { destination: entry.path } : {}),
      ...(sha256 === undefined ? {} : { sha256 }),
      ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    });
    if (entry?.sha256 !== undefined && result.sha256 === entry.sha256.toLowerCase()) this.verified.add(resolvePath(entry.path));
    return result;
  }

  /** Why `reference` cannot be loaded (missing file), or undefined when its file exists or will be downloaded. */
  checkOnDisk(reference: string): string | undefined {
    const { path, url, purpose } = this.resolve(reference);
    if (purpose === 'tts') return `model "${reference}" is a voice (purpose: 'tts'), not a language model`;
    if (!existsSync(path)) {
      if (url !== undefined) return undefined;
      return this.catalog.has(reference)
        ? `model "${reference}" points to ${path}, which does not exist on disk`
        : `model "${reference}" is neither a known model name nor a file on disk`;
    }
    if (!statSync(path).isFile()) return `model "${reference}": ${path} is not a file`;
    return undefined;
  }

  /**
   * Loads (or shares) the model and counts one more user.
   * @throws LlamaDialogError ModelLoadFailed when the file is missing or the engine refuses it.
   */
  async acquire(reference: string, options: { pin?: boolean; defaults?: ModelHostingDefaults } = {}): Promise<ModelLease> {
    // A voice folder is no GGUF: handing it to the engine would only produce a confusing load error.
    if (this.catalog.get(reference)?.purpose === 'tts') {
      throw new LlamaDialogError('ModelLoadFailed', `model "${reference}" is a voice (purpose: 'tts'), not a language model`);
    }
    const entry = this.entryFor(reference, options.defaults ?? {});
    entry.users += 1;
    if (options.pin) entry.pinned = true;
    let model: RuntimeModel;
    try {
      model = await entry.loading;
    } catch (error) {
      entry.users -= 1;
      throw error;
    }
    let released = false;
    return {
      name: entry.name,
      path: entry.path,
      id: this.idOf(reference, entry.path),
      model,
      scheduler: entry.scheduler,
      contexts: entry.contexts,
      pool: entry.pool,
      minSharedPrefix:
        entry.spec.sharedPrefixSpawn === false ? Number.POSITIVE_INFINITY : (entry.spec.minSharedPrefix ?? DEFAULT_MIN_SHARED_PREFIX),
      sharedContext: (first) => this.sharedContextOf(entry, model, first),
      sharedKvBytesPerCell: (kvCacheType) => entry.shared?.kvBytesPerCell ?? estimateKvBytesPerCell(model.info, kvCacheType),
      release: async () => {
        if (released) return;
        released = true;
        entry.users -= 1;
        await this.freeIfUnused(entry);
      },
    };
  }

  /** Marks a loaded model pinned or not; unpinning an unused model frees it. */
  async setPinned(reference: string, pinned: boolean): Promise<void> {
    const entry = this.loaded.get(this.keyOf(reference));
    if (!entry) return;
    entry.pinned = pinned;
    await this.freeIfUnused(entry);
  }

  /** Models currently loaded (or loading). */
  status(): LoadedModelStatus[] {
    return [...this.loaded.values()].map(({ name, path, pinned, users }) => ({ name, path, pinned, users }));
  }

  /** KV figures of a loaded model (live and snapshot bytes now and at peak), or undefined when it is not loaded. */
  modelStats(reference: string): ModelStats | undefined {
    const entry = this.loaded.get(this.keyOf(reference));
    if (!entry?.model) return undefined;
    const shared = entry.shared;
    return {
      name: entry.name,
      contexts: entry.contexts,
      scheduling: entry.scheduler.policy,
      ...entry.pool.stats(),
      policy: entry.policy,
      sharedContext: shared
        ? {
            sequences: shared.sequences,
            contextSize: shared.contextSize,
            cellsReserved: shared.contextSize,
            cellsCap: shared.maxContextSize ?? shared.contextSize,
            resizes: shared.resizes ?? 0,
            kvReservation: entry.spec.kvReservation ?? (shared.kvLayout === 'unified' ? 'onDemand' : 'upFront'),
            kvLayout: shared.kvLayout,
            sequenceContextSize: shared.sequenceContextSize,
            liveSequences: shared.liveSequences,
            cellsUsed: shared.cellsUsed(),
            kvBytesPerCell: shared.kvBytesPerCell,
          }
        : null,
    };
  }

  /** Frees every unused on-demand model (pinned ones stay). */
  async sweep(): Promise<void> {
    await Promise.all([...this.loaded.values()].map((entry) => this.freeIfUnused(entry)));
  }

  /** Frees every model, pinned or not, whether used or not. For process shutdown. */
  async disposeAll(): Promise<void> {
    const entries = [...this.loaded.values()];
    this.loaded.clear();
    await Promise.all(entries.map((entry) => this.disposeEntry(entry)));
  }

  /** The catalog name `reference` means, else the first catalog name of the same file, else the file name. */
  private idOf(reference: string, key: string): string {
    if (this.catalog.has(reference)) return reference;
    for (const [name, entry] of this.catalog) if (resolvePath(entry.path) === key) return name;
    return basename(key);
  }

  private keyOf(reference: string): string {
    return resolvePath(this.resolve(reference).path);
  }

  private entryFor(reference: string, defaults: ModelHostingDefaults): RegistryEntry {
    const key = this.keyOf(reference);
    const existing = this.loaded.get(key);
    if (existing) return existing;
    const spec = this.resolve(reference);
    const policy = spec.contexts ?? defaults.contexts ?? 'auto';
    const entry: RegistryEntry = {
      name: reference,
      path: key,
      pinned: spec.pinned ?? false,
      users: 0,
      loading: undefined as unknown as Promise<RuntimeModel>,
      model: undefined,
      // Provisional: the default policy depends on the form, known once the model is loaded (no job runs before).
      scheduler: createModelScheduler(spec.scheduling),
      spec,
      policy,
      contexts: policy === 'own' ? 'own' : 'shared',
      pool: undefined as unknown as KvSnapshotPool,
      shared: undefined,
      creatingShared: undefined,
    };
    const loading = this.load(reference, spec).then((model) => {
      if (entry.contexts === 'shared' && typeof model.createSharedContext !== 'function') {
        entry.contexts = 'own';
        if (policy === 'shared') {
          this.warn(`model "${reference}" asks for contexts: 'shared' but this engine cannot create a shared context; using own contexts`);
        }
      }
      if (spec.scheduling === undefined && entry.contexts === 'shared') entry.scheduler = createModelScheduler('batched');
      entry.pool = this.createPool(reference, spec, entry);
      return model;
    });
    entry.loading = loading;
    this.loaded.set(key, entry);
    loading.then(
      (model) => {
        entry.model = model;
      },
      () => {
        // A failed load must not poison later attempts (the file may appear or be fixed).
        if (this.loaded.get(key) === entry) this.loaded.delete(key);
      },
    );
    return entry;
  }

  private createPool(reference: string, spec: ResolvedCatalogEntry, entry: RegistryEntry): KvSnapshotPool {
    return new KvSnapshotPool({
      model: reference,
      ...(spec.kvMemoryBudget === undefined ? {} : { kvMemoryBudget: spec.kvMemoryBudget }),
      ...(spec.snapshotMemoryBudget === undefined ? {} : { snapshotMemoryBudget: spec.snapshotMemoryBudget }),
      ...(entry.contexts === 'shared' ? { sequenceSlots: spec.sequences ?? DEFAULT_SHARED_SEQUENCES } : {}),
      sharedContext: () => entry.shared,
    });
  }

  private async load(reference: string, spec: ResolvedCatalogEntry): Promise<RuntimeModel> {
    // Download errors keep their own codes (ModelNotFound, ChecksumMismatch, ...): they say more than ModelLoadFailed.
    if (spec.url !== undefined && (!existsSync(spec.path) || (spec.sha256 !== undefined && !this.verified.has(resolvePath(spec.path))))) {
      await this.download(reference);
    }
    const missing = this.checkOnDisk(reference);
    if (missing) throw new LlamaDialogError('ModelLoadFailed', missing);
    try {
      return await this.loader({ path: spec.path, gpuLayers: spec.gpuLayers, useMmap: spec.useMmap });
    } catch (error) {
      if (isLlamaDialogError(error, 'ModelLoadFailed')) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      throw new LlamaDialogError('ModelLoadFailed', `model "${reference}" (${spec.path}) failed to load: ${reason}`, {
        cause: error,
      });
    }
  }

  private async freeIfUnused(entry: RegistryEntry): Promise<void> {
    if (entry.users > 0 || entry.pinned) return;
    if (this.loaded.get(entry.path) !== entry) return;
    this.loaded.delete(entry.path);
    await this.disposeEntry(entry);
  }

  /** The shared context goes first: its sequences hold the model's weights in use. */
  private async disposeEntry(entry: RegistryEntry): Promise<void> {
    const shared = entry.shared ?? (await entry.creatingShared?.catch(() => undefined));
    entry.shared = undefined;
    await shared?.dispose();
    const model = await entry.loading.catch(() => undefined);
    await model?.dispose();
  }

  /**
   * The sizing rule of a shared context: `sequences` (catalog, default 16) sequence ids; the cap on its cells = the
   * catalog's sharedContextSize if set, else floor(kvMemoryBudget / KV bytes per cell) if a budget is set, else
   * sequences × the first node cache's contextSize. With `kvReservation: 'onDemand'` (default; unified KV) it starts
   * at the first node cache's contextSize, so one agent alone holds what an own context would, and grows to the cap
   * as more sequences need cells; `upFront` takes the whole cap at once. Created once, by the first node cache that
   * needs it.
   */
  private sharedContextOf(
    entry: RegistryEntry,
    model: RuntimeModel,
    first: { contextSize: number; batchSize?: number; threads?: number; kvCacheType?: KvCacheType },
  ): Promise<SharedInferenceContext> {
    if (entry.shared) return Promise.resolve(entry.shared);
    if (entry.creatingShared) return entry.creatingShared;
    const create = model.createSharedContext;
    if (!create) return Promise.reject(new LlamaDialogError('InferenceFailed', `internal: model "${entry.name}" has no shared context`));
    const { spec } = entry;
    const sequences = spec.sequences ?? DEFAULT_SHARED_SEQUENCES;
    const perCell = estimateKvBytesPerCell(model.info, first.kvCacheType);
    const cap =
      spec.sharedContextSize ??
      (spec.kvMemoryBudget !== undefined ? Math.floor(spec.kvMemoryBudget / perCell) : sequences * first.contextSize);
    const kvLayout = spec.kvLayout ?? 'unified';
    const onDemand = kvLayout === 'unified' && (spec.kvReservation ?? 'onDemand') === 'onDemand';
    const start = onDemand ? Math.min(cap, first.contextSize) : cap;
    const contextSize = cap;
    if (kvLayout === 'perSequence' && Math.floor(contextSize / sequences) < first.contextSize) {
      return Promise.reject(
        new LlamaDialogError(
          'InvalidArgument',
          `model "${entry.name}": kvLayout 'perSequence' gives each of ${sequences} sequences ${Math.floor(contextSize / sequences)} ` +
            `cells, fewer than a node's contextSize of ${first.contextSize}; raise sharedContextSize or lower sequences`,
        ),
      );
    }
    const { contextSize: _first, ...engine } = first;
    entry.creatingShared = create
      .call(model, { sequences, contextSize: start, kvLayout, ...(onDemand && cap > start ? { maxContextSize: cap } : {}), ...engine })
      .then((shared) => {
        entry.shared = shared;
        return shared;
      })
      .finally(() => {
        entry.creatingShared = undefined;
      });
    return entry.creatingShared;
  }
}

function resolveCatalogEntry(name: string, entry: ModelCatalogEntry): ResolvedCatalogEntry {
  if (entry.url === undefined) {
    if (typeof entry.path !== 'string' || entry.path === '') {
      throw new LlamaDialogError('InvalidArgument', `model "${name}" needs a path (a GGUF file) or a url to download it from`);
    }
    return { ...entry, path: entry.path };
  }
  const { fileName } = parseModelUrl(entry.url);
  if (entry.sha256 !== undefined) checkSha256(entry.sha256);
  return { ...entry, path: entry.path ?? join(modelCacheDir(), fileName) };
}

function checkHostingFields(name: string, entry: ModelCatalogEntry): void {
  const positive = (field: keyof ModelCatalogEntry): void => {
    const value = entry[field];
    if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 1)) {
      throw new LlamaDialogError('InvalidArgument', `model "${name}": ${field} must be a positive integer, got ${String(value)}`);
    }
  };
  for (const field of ['sequences', 'sharedContextSize', 'kvMemoryBudget', 'snapshotMemoryBudget', 'minSharedPrefix'] as const) positive(field);
  if (entry.scheduling !== undefined && !SCHEDULING_POLICIES.includes(entry.scheduling)) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": scheduling must be 'fifo' or 'batched', got ${String(entry.scheduling)}`);
  }
  if (entry.kvLayout !== undefined && !KV_LAYOUTS.includes(entry.kvLayout)) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": kvLayout must be 'unified' or 'perSequence', got ${String(entry.kvLayout)}`);
  }
  if (entry.contexts !== undefined && !CONTEXT_POLICIES.includes(entry.contexts)) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": contexts must be 'auto', 'own' or 'shared', got ${String(entry.contexts)}`);
  }
  if (entry.purpose !== undefined && !MODEL_PURPOSES.includes(entry.purpose)) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": purpose must be 'generation', 'embedding' or 'tts', got ${String(entry.purpose)}`);
  }
  if (entry.purpose === 'tts' && entry.url !== undefined) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": a tts voice is a folder on disk (path); url is not supported for voices`);
  }
  if (entry.pooling !== undefined && !['model', 'mean', 'cls', 'last'].includes(entry.pooling)) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": pooling must be 'model', 'mean', 'cls' or 'last', got ${String(entry.pooling)}`);
  }
  if (entry.kvReservation !== undefined && !KV_RESERVATIONS.includes(entry.kvReservation)) {
    throw new LlamaDialogError('InvalidArgument', `model "${name}": kvReservation must be 'onDemand' or 'upFront', got ${String(entry.kvReservation)}`);
  }
}
