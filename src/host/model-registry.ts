import { existsSync, statSync } from 'node:fs';
import { basename, resolve as resolvePath } from 'node:path';
import { LlamaDialogError, isLlamaDialogError } from '../errors.js';
import type { RuntimeModel } from '../engine/types.js';
import type { ModelLoader } from './model-loader.js';
import { createModelScheduler, type ModelScheduler, type SchedulingPolicy } from './model-scheduler.js';

/** One model the registry knows by name. */
export interface ModelCatalogEntry {
  /** GGUF file on disk. */
  path: string;
  /** Pinned models stay loaded once loaded; on-demand ones are freed as soon as nothing uses them. Default false. */
  pinned?: boolean;
  /** Layers to offload to the GPU (engine default when omitted). */
  gpuLayers?: number;
  useMmap?: boolean;
  /** How the agents on this model share it (default `fifo`: one inference at a time, first come first served). */
  scheduling?: SchedulingPolicy;
}

/** What the registry reports about a loaded model. */
export interface LoadedModelStatus {
  name: string;
  path: string;
  pinned: boolean;
  /** Holders (agents, explicit loads) currently using it. */
  users: number;
}

interface RegistryEntry {
  name: string;
  path: string;
  pinned: boolean;
  users: number;
  loading: Promise<RuntimeModel>;
  model: RuntimeModel | undefined;
  scheduler: ModelScheduler;
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
  release(): Promise<void>;
}

/**
 * Process-wide set of loaded models, shared by every session. A model is loaded once however many agents use it;
 * it is keyed by its resolved file path, so a catalog name and the same path share one instance.
 */
export class ModelRegistry {
  private readonly catalog = new Map<string, ModelCatalogEntry>();
  private readonly loaded = new Map<string, RegistryEntry>();
  private readonly loader: ModelLoader;

  constructor(options: { loader: ModelLoader; catalog?: Record<string, ModelCatalogEntry> }) {
    this.loader = options.loader;
    for (const [name, entry] of Object.entries(options.catalog ?? {})) this.define(name, entry);
  }

  /** Adds or replaces a catalog name. Affects models loaded afterwards only. */
  define(name: string, entry: ModelCatalogEntry): void {
    if (!name) throw new LlamaDialogError('InvalidArgument', 'model name must be a non-empty string');
    this.catalog.set(name, { ...entry });
  }

  /** The catalog entry a reference means: a catalog name, else the reference taken as a file path. */
  resolve(reference: string): ModelCatalogEntry {
    return this.catalog.get(reference) ?? { path: reference };
  }

  /** Why `reference` cannot be loaded (missing file), or undefined when its file exists. */
  checkOnDisk(reference: string): string | undefined {
    const { path } = this.resolve(reference);
    if (!existsSync(path)) {
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
  async acquire(reference: string, options: { pin?: boolean } = {}): Promise<ModelLease> {
    const entry = this.entryFor(reference);
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

  /** Frees every unused on-demand model (pinned ones stay). */
  async sweep(): Promise<void> {
    await Promise.all([...this.loaded.values()].map((entry) => this.freeIfUnused(entry)));
  }

  /** Frees every model, pinned or not, whether used or not. For process shutdown. */
  async disposeAll(): Promise<void> {
    const entries = [...this.loaded.values()];
    this.loaded.clear();
    await Promise.all(entries.map(async (entry) => (await entry.loading.catch(() => undefined))?.dispose()));
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

  private entryFor(reference: string): RegistryEntry {
    const key = this.keyOf(reference);
    const existing = this.loaded.get(key);
    if (existing) return existing;
    const spec = this.resolve(reference);
    const loading = this.load(reference, spec);
    const entry: RegistryEntry = {
      name: reference,
      path: key,
      pinned: spec.pinned ?? false,
      users: 0,
      loading,
      model: undefined,
      scheduler: createModelScheduler(spec.scheduling),
    };
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

  private async load(reference: string, spec: ModelCatalogEntry): Promise<RuntimeModel> {
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
    const model = await entry.loading.catch(() => undefined);
    await model?.dispose();
  }
}
