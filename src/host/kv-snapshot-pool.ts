import { LlamaDialogError } from '../errors.js';
import type { SharedInferenceContext } from '../engine/types.js';

/** A saved KV state in RAM: the engine's bytes and the tokens they hold (what `loadState` needs back). */
export interface KvSnapshot {
  bytes: Uint8Array;
  tokens: Int32Array;
}

/** What the pool needs of one node cache (node-cache.ts implements it). */
export interface KvPoolMember {
  /** KV bytes its engine object holds now (0 without one), read from the engine. */
  readonly kvBytes: number;
  /** True when it is a sequence of the model's shared context (its cells are counted by the shared context). */
  readonly inSharedContext: boolean;
  /** True while it holds an engine object (an own context or a sequence id). */
  readonly holdsKv: boolean;
  /** No operation of its own is queued or running: it may be evicted. */
  readonly idle: boolean;
  /** Pool tick of its last use; smaller = less recently used. */
  readonly lastUsed: number;
  /**
   * Saves its KV state with `store` (when it holds any tokens) and frees its engine object. Must mark the member
   * busy synchronously (so it is never picked twice) and never reject.
   */
  evict(store: (snapshot: KvSnapshot) => void): Promise<void>;
}

export interface KvSnapshotPoolOptions {
  /** Model name, for messages. */
  model: string;
  /** Bytes of live KV memory allowed on this model; undefined = unlimited (nothing is ever evicted for bytes). */
  kvMemoryBudget?: number;
  /** Bytes of snapshots kept in RAM; beyond it the oldest are dropped. Default 4 × kvMemoryBudget, else unlimited. */
  snapshotMemoryBudget?: number;
  /** Sequence ids of the shared context (for `contexts: 'shared'`); undefined = no limit on handles. */
  sequenceSlots?: number;
  /** The model's shared context once it exists: its cells are the live KV of every sequence. */
  sharedContext?: () => SharedInferenceContext | undefined;
}

/** What a benchmark reads: live and snapshot bytes now and at peak, from the engine objects. */
export interface KvPoolStats {
  kvMemoryBudget: number | null;
  snapshotMemoryBudget: number | null;
  /** Live KV bytes now: own contexts' `kvBytes` plus the shared context's `cellsUsed() × kvBytesPerCell`. */
  liveKvBytes: number;
  /** Highest live KV bytes seen at any pool event (admission, end of a job, eviction). */
  peakLiveKvBytes: number;
  snapshotBytes: number;
  peakSnapshotBytes: number;
  snapshots: number;
  evictions: number;
  restores: number;
  snapshotsDropped: number;
}

/** Multiple of kvMemoryBudget that snapshots may take in RAM by default: RAM is usually several times the KV budget. */
export const DEFAULT_SNAPSHOT_BUDGET_FACTOR = 4;

/** A running job's claim: ends when the job does. */
export interface KvAdmission {
  end(): void;
}

/**
 * The KV memory of one loaded model (SPEC §2.4 "KV snapshot pool"). Rules:
 * - Live KV is always read from the engine objects (own contexts' `kvBytes`; the shared context's
 *   `cellsUsed() × kvBytesPerCell`), never from this pool's own arithmetic. A job about to run claims its peak
 *   (`admit`): what its engine object will hold at most (an own context: contextSize × bytes per cell; a sequence:
 *   prompt + maxTokens cells); the part not yet allocated counts as committed until the job ends.
 * - Live + committed never exceeds `kvMemoryBudget` (nor, in the shared form, the shared context's cells × bytes
 *   per cell). When a claim would, the least recently used IDLE members (no
 *   operation queued or running; never the claimant) are saved to RAM (`saveState`) and freed, until it fits; a
 *   claim waits for those frees before it allocates. When it cannot fit even with every idle member evicted, it waits
 *   for a busy member to go idle (`batched`: the room a running job holds then becomes evictable) as long as one is
 *   busy with something other than waiting here and the claim would fit in the whole budget; otherwise it fails with
 *   InsufficientMemory naming the numbers, and nothing is evicted. Members told idle by `noteIdle()`. With `sequenceSlots`, a member that needs a
 *   new sequence id evicts the least recently used idle sequence the same way when every id is taken.
 * - A member's snapshot is restored (`loadState`) on its next use; prefix reuse then decodes only the new suffix.
 * - Snapshots live under `snapshotMemoryBudget`; beyond it the oldest are dropped (that member re-reads its prompt
 *   once), never the snapshot of a member that is claiming memory to restore it. `drop` (releaseCache, agent
 *   destroyed) forgets a member's snapshot.
 */
export class KvSnapshotPool {
  readonly kvMemoryBudget: number | undefined;
  readonly snapshotMemoryBudget: number | undefined;
  private readonly members = new Set<KvPoolMember>();
  private readonly claims = new Map<KvPoolMember, { peakBytes: number; slot: boolean }>();
  private readonly evicting = new Map<KvPoolMember, Promise<void>>();
  /** Members between the start of a claim and the restore of their snapshot: their snapshot is about to be used. */
  private readonly claimants = new Set<KvPoolMember>();
  /** Wake-ups of claims waiting for another member to go idle (its room may then be evicted or reused). */
  private readonly claimWaiters: (() => void)[] = [];
  /** Members whose claim waits for another member to go idle. */
  private readonly waiting = new Set<KvPoolMember>();
  /** Insertion order = age: the first entry is the oldest. */
  private readonly snapshots = new Map<KvPoolMember, KvSnapshot>();
  private snapshotTotal = 0;
  private clock = 0;
  private peakLive = 0;
  private peakSnapshots = 0;
  private evictions = 0;
  private restores = 0;
  private dropped = 0;

  constructor(private readonly options: KvSnapshotPoolOptions) {
    this.kvMemoryBudget = options.kvMemoryBudget;
    this.snapshotMemoryBudget =
      options.snapshotMemoryBudget ??
      (options.kvMemoryBudget === undefined ? undefined : options.kvMemoryBudget * DEFAULT_SNAPSHOT_BUDGET_FACTOR);
  }

  add(member: KvPoolMember): void {
    this.members.add(member);
  }

  /** Forgets a member (disposed) and its snapshot. */
  remove(member: KvPoolMember): void {
    this.members.delete(member);
    this.claims.delete(member);
    this.drop(member);
  }

  /** Every member, for shared-prefix spawn (which looks for a live sequence to copy). */
  all(): Iterable<KvPoolMember> {
    return this.members.values();
  }

  /** A new, larger tick for least-recently-used order. */
  tick(): number {
    this.clock += 1;
    return this.clock;
  }

  /** Live KV bytes now, read from the engine objects. */
  liveKvBytes(): number {
    let live = 0;
    for (const member of this.members) if (!member.inSharedContext) live += member.kvBytes;
    const shared = this.options.sharedContext?.();
    if (shared) live += shared.cellsUsed() * shared.kvBytesPerCell;
    return live;
  }

  /**
   * Claims room for `member`'s next job: `peakBytes` of KV at most, and a sequence id when `slot`. Evicts idle members
   * as the rules say and resolves once the room is there; the claim holds until `end()`.
   * @throws LlamaDialogError InsufficientMemory when the claim cannot fit even with every idle member evicted and no
   *   running job could give room back; Aborted when `signal` aborts while it waits.
   */
  async admit(member: KvPoolMember, request: { peakBytes: number; slot: boolean }, signal?: AbortSignal): Promise<KvAdmission> {
    this.claims.delete(member);
    this.claimants.add(member);
    try {
      return await this.claim(member, request, signal);
    } catch (error) {
      this.claimants.delete(member);
      throw error;
    }
  }

  private async claim(member: KvPoolMember, request: { peakBytes: number; slot: boolean }, signal: AbortSignal | undefined): Promise<KvAdmission> {
    for (;;) {
      const need = Math.max(0, request.peakBytes - member.kvBytes);
      const committed = this.committedBytes();
      const inFlight = [...this.evicting.keys()];
      const fits = (freed: readonly KvPoolMember[]): boolean => this.fits(need, request.slot, committed, freed);
      if (fits([])) {
        this.claims.set(member, request);
        this.samplePeaks();
        let ended = false;
        return {
          end: () => {
            if (ended) return;
            ended = true;
            this.claimants.delete(member);
            if (this.claims.get(member) === request) this.claims.delete(member);
            this.samplePeaks();
            this.noteIdle();
          },
        };
      }
      if (!fits(inFlight)) {
        const candidates = [...this.members]
          .filter((other) => other !== member && other.idle && other.holdsKv && !this.evicting.has(other))
          .sort((a, b) => a.lastUsed - b.lastUsed);
        const victims: KvPoolMember[] = [];
        for (const candidate of candidates) {
          if (fits([...inFlight, ...victims])) break;
          victims.push(candidate);
        }
        if (!fits([...inFlight, ...victims])) {
          if (inFlight.length === 0) {
            // Room held by running jobs comes back when they end (they never wait on the pool, so this cannot
            // deadlock); a claim that could not fit even in an empty pool fails now.
            if (!this.couldEverFit(need, request.slot) || !this.busyElsewhere(member)) {
              throw this.insufficient(member, request, need, committed);
            }
            this.waiting.add(member);
            try {
              await this.nextIdle(signal);
            } finally {
              this.waiting.delete(member);
            }
            continue;
          }
        } else {
          for (const victim of victims) this.startEviction(victim);
        }
      }
      // Wait for the frees (ours or another claim's) and measure again: a freed sequence may release fewer cells
      // than it held when other sequences share them.
      await Promise.all(this.evicting.values());
    }
  }

  /** The member's snapshot, if it has one (left in the pool). */
  peek(member: KvPoolMember): KvSnapshot | undefined {
    return this.snapshots.get(member);
  }

  /** Takes the member's snapshot out of the pool to restore it. */
  take(member: KvPoolMember): KvSnapshot | undefined {
    this.claimants.delete(member);
    const snapshot = this.snapshots.get(member);
    if (!snapshot) return undefined;
    this.snapshots.delete(member);
    this.snapshotTotal -= snapshot.bytes.byteLength;
    this.restores += 1;
    return snapshot;
  }

  /** Forgets the member's snapshot (releaseCache, agent destroyed). */
  drop(member: KvPoolMember): void {
    const snapshot = this.snapshots.get(member);
    if (!snapshot) return;
    this.snapshots.delete(member);
    this.snapshotTotal -= snapshot.bytes.byteLength;
  }

  stats(): KvPoolStats {
    this.samplePeaks();
    return {
      kvMemoryBudget: this.kvMemoryBudget ?? null,
      snapshotMemoryBudget: this.snapshotMemoryBudget ?? null,
      liveKvBytes: this.liveKvBytes(),
      peakLiveKvBytes: this.peakLive,
      snapshotBytes: this.snapshotTotal,
      peakSnapshotBytes: this.peakSnapshots,
      snapshots: this.snapshots.size,
      evictions: this.evictions,
      restores: this.restores,
      snapshotsDropped: this.dropped,
    };
  }

  /** A member's queue ran empty (its job ended): claims waiting for room look again. */
  noteIdle(): void {
    const waiting = this.claimWaiters.splice(0);
    for (const wake of waiting) wake();
  }

  /**
   * True when another member is busy with something that ends without waiting on this pool (a job, an eviction, a
   * release, a prefix copy): its room may come back. Members whose own claim waits do not count, so waiting claims
   * never wait on each other.
   */
  private busyElsewhere(member: KvPoolMember): boolean {
    for (const other of this.members) if (other !== member && !other.idle && !this.waiting.has(other)) return true;
    return false;
  }

  /** True when the claim fits in the pool with every other member gone. */
  private couldEverFit(need: number, slot: boolean): boolean {
    const cap = this.byteCap();
    if (cap !== undefined && need > cap) return false;
    return !slot || this.options.sequenceSlots === undefined || this.options.sequenceSlots >= 1;
  }

  private nextIdle(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(new LlamaDialogError('Aborted', 'cancelled while waiting for KV memory'));
        return;
      }
      const onAbort = (): void => {
        const index = this.claimWaiters.indexOf(wake);
        if (index >= 0) this.claimWaiters.splice(index, 1);
        reject(new LlamaDialogError('Aborted', 'cancelled while waiting for KV memory'));
      };
      const wake = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.claimWaiters.push(wake);
    });
  }

  /** Live bytes plus what running claims may still allocate. */
  private committedBytes(): number {
    let committed = this.liveKvBytes();
    for (const [member, claim] of this.claims) committed += Math.max(0, claim.peakBytes - member.kvBytes);
    return committed;
  }

  /**
   * Bytes live KV may reach: the budget, and for the shared form also the most cells the shared context can hold (its
   * cap, for one sized to use; it cannot hold more, so idle sequences are evicted rather than letting a decode find no
   * free cell).
   */
  private byteCap(): number | undefined {
    const shared = this.options.sharedContext?.();
    const cells = shared ? (shared.maxContextSize ?? shared.contextSize) * shared.kvBytesPerCell : undefined;
    if (cells === undefined) return this.kvMemoryBudget;
    return this.kvMemoryBudget === undefined ? cells : Math.min(this.kvMemoryBudget, cells);
  }

  private fits(need: number, slot: boolean, committed: number, freed: readonly KvPoolMember[]): boolean {
    const budget = this.byteCap();
    if (budget !== undefined) {
      const freedBytes = freed.reduce((sum, member) => sum + member.kvBytes, 0);
      if (committed - freedBytes + need > budget) return false;
    }
    const slots = this.options.sequenceSlots;
    if (slot && slots !== undefined) {
      let taken = 0;
      for (const member of this.members) if (member.inSharedContext && member.holdsKv) taken += 1;
      for (const [member, claim] of this.claims) if (claim.slot && !member.holdsKv) taken += 1;
      const freedSlots = freed.filter((member) => member.inSharedContext && member.holdsKv).length;
      if (taken - freedSlots >= slots) return false;
    }
    return true;
  }

  private startEviction(victim: KvPoolMember): void {
    this.evictions += 1;
    const eviction = victim
      .evict((snapshot) => this.store(victim, snapshot))
      .finally(() => {
        this.evicting.delete(victim);
        this.samplePeaks();
      });
    this.evicting.set(victim, eviction);
  }

  /**
   * Keeps the snapshot under the cap: the oldest go first, except one whose owner is claiming memory to restore it
   * (dropping it would waste the eviction that makes room for it); a snapshot that cannot fit is not kept at all.
   */
  private store(member: KvPoolMember, snapshot: KvSnapshot): void {
    this.drop(member);
    const size = snapshot.bytes.byteLength;
    const cap = this.snapshotMemoryBudget;
    if (cap !== undefined) {
      let droppable = 0;
      for (const [owner, saved] of this.snapshots) if (!this.claimants.has(owner)) droppable += saved.bytes.byteLength;
      if (this.snapshotTotal - droppable + size > cap) {
        this.dropped += 1;
        return;
      }
      for (const [oldest, saved] of this.snapshots) {
        if (this.snapshotTotal + size <= cap) break;
        if (this.claimants.has(oldest)) continue;
        this.snapshots.delete(oldest);
        this.snapshotTotal -= saved.bytes.byteLength;
        this.dropped += 1;
      }
    }
    this.snapshots.set(member, snapshot);
    this.snapshotTotal += size;
    this.samplePeaks();
  }

  private samplePeaks(): void {
    this.peakLive = Math.max(this.peakLive, this.liveKvBytes());
    this.peakSnapshots = Math.max(this.peakSnapshots, this.snapshotTotal);
  }

  private insufficient(
    member: KvPoolMember,
    request: { peakBytes: number; slot: boolean },
    need: number,
    committed: number,
  ): LlamaDialogError {
    const busy = [...this.members].filter((other) => other !== member && !other.idle).length;
    const budget = this.byteCap();
    if (budget !== undefined && need > 0 && committed + need > budget) {
      return new LlamaDialogError(
        'InsufficientMemory',
        `model ${this.options.model}: this request needs ${need} more bytes of KV memory (${request.peakBytes} at its peak) ` +
          `but ${committed} of ${budget === this.kvMemoryBudget ? `the kvMemoryBudget of ${budget} bytes` : `the ${budget} bytes of the shared context's cells`} are live or claimed and cannot be freed ` +
          `(${busy} other cache(s) busy, every idle one considered); raise kvMemoryBudget or lower contextSize / maxTokens`,
      );
    }
    return new LlamaDialogError(
      'InsufficientMemory',
      `model ${this.options.model}: every one of the ${this.options.sequenceSlots ?? 0} sequences of the shared context ` +
        `is held by a busy cache (${busy} busy); raise sequences in the model's catalog entry`,
    );
  }
}
