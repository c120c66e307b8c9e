import type { InferenceContext } from '../engine/types.js';
import type { CacheFacts } from '../diag/cache-facts.js';
import type { ModelLease } from './model-registry.js';
import type { KvCacheType } from '../engine/types.js';

/** When an agent's per-node KV caches are created (SPEC §6). */
export type KvCacheInitialization = 'AllocateOnly' | 'Prefill' | 'DeferAllocation';

/**
 * One node's KV cache inside one agent (SPEC §6 "the node's handle"): created at agent creation or on first use,
 * released on request (the next use re-creates it empty) and disposed with the agent. Also remembers what happened
 * since the node last ran, so diagnostics can name the cause of a cache miss. Nodes never hold it: they ask an
 * inference port (inference-port.ts), which runs their work on it under the model's scheduler.
 */
export class NodeCache {
  private context: InferenceContext | undefined;
  private creating: Promise<InferenceContext> | undefined;
  private disposed = false;
  private usedOnce = false;
  private releasedSinceRun = false;

  constructor(
    readonly lease: ModelLease,
    readonly contextSize: number,
    private readonly options: { batchSize?: number; threads?: number; kvCacheType?: KvCacheType },
  ) {}

  /** True when a context exists (KV memory held). */
  get allocated(): boolean {
    return this.context !== undefined;
  }

  /** The node's context, created now if needed. */
  async get(): Promise<InferenceContext> {
    if (this.disposed) throw new Error('internal: node context used after its agent was destroyed');
    if (this.context) return this.context;
    this.creating ??= this.lease.model
      .createContext({ contextSize: this.contextSize, ...this.options })
      .then((context) => {
        this.context = context;
        return context;
      })
      .finally(() => {
        this.creating = undefined;
      });
    return this.creating;
  }

  /** Frees the KV memory; the next `get()` starts from an empty cache. */
  async release(): Promise<void> {
    const context = this.context ?? (await this.creating?.catch(() => undefined));
    if (!context) return;
    this.context = undefined;
    this.releasedSinceRun = true;
    await context.dispose();
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const context = this.context ?? (await this.creating?.catch(() => undefined));
    this.context = undefined;
    await context?.dispose();
  }

  /** Facts since the previous run; calling it starts a new period. */
  takeCacheFacts(): CacheFacts {
    const facts: CacheFacts = {
      firstUse: !this.usedOnce,
      released: this.releasedSinceRun,
    };
    this.usedOnce = true;
    this.releasedSinceRun = false;
    return facts;
  }
}
