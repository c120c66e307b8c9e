import { commonPrefixLength } from '../engine/common-prefix.js';
import type { InferenceContext, InferenceSequence, KvCacheType } from '../engine/types.js';
import type { CacheFacts } from '../diag/cache-facts.js';
import { estimateKvBytesPerCell } from './kv-memory.js';
import type { KvPoolMember, KvSnapshot } from './kv-snapshot-pool.js';
import type { ModelLease } from './model-registry.js';

/** When an agent's per-node KV caches are created (SPEC §6). */
export type KvCacheInitialization = 'AllocateOnly' | 'Prefill' | 'DeferAllocation';

/** Whose cache this is, for diagnostics (shared-prefix spawn names its source). */
export interface NodeCacheOwner {
  agentId?: string;
  node?: string;
}

/** What a job will ask of the cache, so the pool can budget it: its prompt and how many tokens it may add. */
export interface CacheWork {
  prompt?: Int32Array;
  maxTokens?: number;
  /** Cancels a wait for KV memory. */
  signal?: AbortSignal;
}

/** Orders the caches that prepare a job, so that a spawning cache only ever waits for one that began before it. */
let startingCounter = 0;

/**
 * One node's KV cache inside one agent (SPEC §6 "the node's handle"): an own context, or a sequence of the model's
 * shared context (`contexts: 'shared'`). Created at agent creation or on first use, released on request (the next use
 * re-creates it empty) and disposed with the agent. Also remembers what happened since the node last ran, so
 * diagnostics can name the cause of a cache miss. Nodes never hold it: they ask an inference port
 * (inference-port.ts), which runs their work on it under the model's scheduler.
 *
 * Ownership and ordering: every operation on the handle (a job, an eviction by the model's KV snapshot pool, a
 * release, dispose) runs through one queue, so the pool only ever evicts a cache with nothing queued, and a job that
 * arrives during an eviction waits for it and then restores the snapshot. Before a job touches the engine it claims
 * its peak KV memory from the pool (which may evict other idle caches first).
 */
export class NodeCache implements KvPoolMember {
  private handle: InferenceContext | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private disposed = false;
  private usedOnce = false;
  private releasedSinceRun = false;
  /** Saved and freed by the pool since the last job: the next job restores (or re-reads, if the snapshot was dropped). */
  private evicted = false;
  /** The facts object of the current period: what happens when the job starts (restore, spawn) is written into it. */
  private period: CacheFacts = { firstUse: false, released: false };
  private used = 0;

  constructor(
    readonly lease: ModelLease,
    readonly contextSize: number,
    private readonly options: { batchSize?: number; threads?: number; kvCacheType?: KvCacheType },
    readonly owner: NodeCacheOwner = {},
  ) {
    lease.pool.add(this);
  }

  /** True when KV memory is held (an own context or a sequence exists). */
  get allocated(): boolean {
    return this.handle !== undefined;
  }

  get holdsKv(): boolean {
    return this.handle !== undefined;
  }

  get kvBytes(): number {
    return this.handle?.kvBytes ?? 0;
  }

  get inSharedContext(): boolean {
    return this.lease.contexts === 'shared';
  }

  /** The prompt of the job running on this cache now (what its sequence will hold), if it has one. */
  private runningPrompt: Int32Array | undefined;
  /**
   * Set while this cache prepares its sequence for a job with a prompt (its own spawn, restore): the prompt, when it
   * began preparing (order), and a promise settled once the job has queued its work on the engine. A cache that
   * spawns after it may copy from it once that promise settles (the engine then waits for the prompt's decode).
   */
  private starting: { prompt: Int32Array; order: number; queued: Promise<void> } | undefined;

  get idle(): boolean {
    return this.queued === 0;
  }

  get lastUsed(): number {
    return this.used;
  }

  /** The node's context, created (or restored) now if needed. */
  get(): Promise<InferenceContext> {
    return this.use({}, async (context) => context);
  }

  /**
   * Runs `job` on the node's context once the pool has room for `work`: creates the context if needed, restores an
   * evicted one from its snapshot, or (shared form, empty sequence) starts it from a copy of the longest matching
   * live sequence.
   * @throws LlamaDialogError InsufficientMemory when the model's kvMemoryBudget cannot hold the work.
   */
  use<T>(work: CacheWork, job: (context: InferenceContext) => Promise<T>): Promise<T> {
    return this.exclusive(async () => {
      if (this.disposed) throw new Error('internal: node context used after its agent was destroyed');
      let markQueued: () => void = () => undefined;
      const pool = this.lease.pool;
      const snapshot = this.handle ? undefined : pool.peek(this);
      const admission = await pool.admit(this, {
        peakBytes: this.peakBytes(work, snapshot),
        slot: this.inSharedContext && !this.handle,
      }, work.signal);
      try {
        this.used = pool.tick();
        const context = this.handle ?? (await this.create());
        if (work.prompt) this.starting = { prompt: work.prompt, order: ++startingCounter, queued: new Promise((resolve) => (markQueued = resolve)) };
        if (this.evicted) {
          this.evicted = false;
          await this.restore(context);
        }
        if (work.prompt && this.inSharedContext && context.tokens.length === 0) await this.spawnFromSharedPrefix(context, work.prompt);
        this.runningPrompt = work.prompt;
        // The job queues its engine work in its synchronous part (generate posts to the compute thread at once).
        const running = job(context);
        this.starting = undefined;
        markQueued();
        return await running;
      } finally {
        this.starting = undefined;
        markQueued();
        this.runningPrompt = undefined;
        this.used = pool.tick();
        admission.end();
      }
    });
  }

  /** Frees the KV memory and forgets any snapshot; the next use starts from an empty cache. */
  release(): Promise<void> {
    return this.exclusive(async () => {
      const hadSnapshot = this.lease.pool.peek(this) !== undefined;
      this.lease.pool.drop(this);
      const handle = this.handle;
      if (handle || hadSnapshot || this.evicted) this.releasedSinceRun = true;
      this.evicted = false;
      await this.disposeHandle();
    });
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.lease.pool.remove(this);
    await this.exclusive(() => this.disposeHandle());
  }

  /** @internal Called by the KV snapshot pool on an idle cache: save to RAM, free the engine object. */
  evict(store: (snapshot: KvSnapshot) => void): Promise<void> {
    return this.exclusive(async () => {
      const handle = this.handle;
      if (!handle) return;
      const tokens = handle.tokens;
      if (tokens.length > 0) {
        try {
          store({ bytes: await handle.saveState(), tokens });
        } catch {
          // Unsaved: the next turn re-reads its prompt (reported as snapshotDropped).
        }
      }
      this.evicted = tokens.length > 0;
      await this.disposeHandle();
    }).catch(() => undefined);
  }

  /**
   * Frees the engine object. The handle is forgotten only once it is gone: until then the pool counts it as held, so a
   * sequence id is never promised to another cache while the engine still has it taken (it frees the id on the compute
   * thread, after the work queued before).
   */
  private async disposeHandle(): Promise<void> {
    const handle = this.handle;
    if (!handle) return;
    try {
      await handle.dispose();
    } finally {
      this.handle = undefined;
    }
  }

  /** Facts since the previous run; calling it starts a new period. */
  takeCacheFacts(): CacheFacts {
    const facts: CacheFacts = {
      firstUse: !this.usedOnce,
      released: this.releasedSinceRun,
    };
    this.usedOnce = true;
    this.releasedSinceRun = false;
    this.period = facts;
    return facts;
  }

  private exclusive<T>(operation: () => Promise<T>): Promise<T> {
    this.queued += 1;
    const result = this.queue.then(operation);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result.finally(() => {
      this.queued -= 1;
      if (this.queued === 0) this.lease.pool.noteIdle();
    });
  }

  private async create(): Promise<InferenceContext> {
    const lease = this.lease;
    if (lease.contexts === 'shared') {
      const shared = await lease.sharedContext({ contextSize: this.contextSize, ...this.options });
      this.handle = shared.createSequence({ contextSize: Math.min(this.contextSize, shared.sequenceContextSize) });
    } else {
      this.handle = await lease.model.createContext({ contextSize: this.contextSize, ...this.options });
    }
    return this.handle;
  }

  private async restore(context: InferenceContext): Promise<void> {
    const snapshot = this.lease.pool.take(this);
    if (snapshot) {
      try {
        await context.loadState(snapshot.bytes, snapshot.tokens);
        this.period.restoredFromSnapshot = true;
        return;
      } catch {
        // A state the engine refuses now: the prompt is re-read, as for a dropped snapshot.
      }
    }
    this.period.snapshotDropped = true;
  }

  /**
   * Shared-prefix spawn (SPEC §2.4): copy the longest prefix a live sequence shares with `prompt`. A running source
   * counts too (in a tavern every other NPC is usually mid-reply when a new one is first addressed): the engine makes
   * the copy between two steps and keeps only what the source still holds of `prompt` then.
   */
  private async spawnFromSharedPrefix(context: InferenceContext, prompt: Int32Array): Promise<void> {
    const target = context as InferenceSequence;
    const ownOrder = this.starting?.order ?? Number.POSITIVE_INFINITY;
    let best: { cache: NodeCache; sequence: InferenceSequence; length: number; queued?: Promise<void> } | undefined;
    for (const member of this.lease.pool.all()) {
      if (!(member instanceof NodeCache) || member === this || !member.handle) continue;
      const sequence = member.handle as InferenceSequence;
      if (sequence.shared !== target.shared) continue;
      // A running source will hold its job's prompt; its token mirror says only what it held before the job. One that
      // began preparing before this cache will too, once its job is queued (only earlier ones: two never wait on
      // each other).
      const earlier = member.starting !== undefined && member.starting.order < ownOrder ? member.starting : undefined;
      const holds = member.runningPrompt ?? earlier?.prompt ?? sequence.tokens;
      const length = Math.min(commonPrefixLength(holds, prompt), target.contextSize);
      if (length >= this.lease.minSharedPrefix && length > (best?.length ?? 0)) {
        best = { cache: member, sequence, length, ...(earlier && member.runningPrompt === undefined ? { queued: earlier.queued } : {}) };
      }
    }
    if (!best) return;
    // A source still preparing: copy after its job is queued, so that the engine sees its prompt under way.
    if (best.queued) await best.queued;
    const { cache, sequence, length } = best;
    const copy = (): Promise<number> => target.copyPrefixFrom(sequence, length, prompt);
    // An idle source is held through its own queue, so that no eviction or job of it runs during the copy; a running
    // one cannot be evicted or disposed before the copy, which the engine queues ahead of anything asked later.
    const copied = cache.idle ? await cache.exclusive(copy) : await copy();
    if (copied > 0) this.period.sharedFrom = { ...cache.owner, tokens: copied };
  }

  /** Most KV bytes the work may hold: an own context is allocated whole; a sequence grows to prompt + maxTokens. */
  private peakBytes(work: CacheWork, snapshot: KvSnapshot | undefined): number {
    if (this.lease.contexts !== 'shared') {
      if (this.handle) return this.handle.kvBytes;
      return this.contextSize * estimateKvBytesPerCell(this.lease.model.info, this.options.kvCacheType);
    }
    const perCell = this.lease.sharedKvBytesPerCell(this.options.kvCacheType);
    const held = this.handle?.tokens.length ?? snapshot?.tokens.length ?? 0;
    const cells = Math.min(this.contextSize, Math.max(held, (work.prompt?.length ?? 0) + (work.maxTokens ?? 0)));
    return cells * perCell;
  }
}
