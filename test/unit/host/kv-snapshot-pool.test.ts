import { describe, expect, it } from 'vitest';
import { KvSnapshotPool, type KvPoolMember, type KvSnapshot } from '../../../src/host/kv-snapshot-pool.js';
import { deferred } from '../../kits/deferred.js';

/** A member whose "engine object" holds `size` bytes while allocated; its snapshot is `snapshotBytes` long. */
class Member implements KvPoolMember {
  allocated = false;
  busyCount = 0;
  lastUsed = 0;
  readonly inSharedContext = false;
  constructor(
    readonly name: string,
    private readonly pool: KvSnapshotPool,
    private readonly size: number,
    private readonly snapshotBytes = 10,
  ) {
    pool.add(this);
  }
  get kvBytes(): number {
    return this.allocated ? this.size : 0;
  }
  get holdsKv(): boolean {
    return this.allocated;
  }
  get idle(): boolean {
    return this.busyCount === 0;
  }
  async evict(store: (snapshot: KvSnapshot) => void): Promise<void> {
    this.busyCount += 1;
    await Promise.resolve();
    store({ bytes: new Uint8Array(this.snapshotBytes), tokens: Int32Array.of(1, 2, 3) });
    this.allocated = false;
    this.busyCount -= 1;
    this.pool.noteIdle();
  }
  /** One job: claim, allocate, (wait), end. */
  async run(pool: KvSnapshotPool, hold?: Promise<void>): Promise<void> {
    this.busyCount += 1;
    try {
      const admission = await pool.admit(this, { peakBytes: this.size, slot: false });
      this.allocated = true;
      this.lastUsed = pool.tick();
      await hold;
      admission.end();
    } finally {
      this.busyCount -= 1;
      pool.noteIdle();
    }
  }
}

describe('KvSnapshotPool', () => {
  it('evicts the least recently used idle members, never over budget, and drops the oldest snapshots beyond the cap', async () => {
    const pool = new KvSnapshotPool({ model: 'm', kvMemoryBudget: 100, snapshotMemoryBudget: 25 });
    const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((name) => new Member(name, pool, 50));
    await a!.run(pool);
    await b!.run(pool);
    expect(pool.liveKvBytes()).toBe(100);
    await c!.run(pool);
    expect([a!.allocated, b!.allocated, c!.allocated]).toEqual([false, true, true]);
    expect(pool.peek(a!)).toBeDefined();
    await d!.run(pool);
    expect(pool.stats()).toMatchObject({ snapshots: 2, snapshotBytes: 20, snapshotsDropped: 0 });
    await e!.run(pool);
    // a's snapshot (the oldest) went first: 30 bytes > the cap of 25.
    expect(pool.peek(a!)).toBeUndefined();
    expect(pool.peek(b!)).toBeDefined();
    expect(pool.peek(c!)).toBeDefined();
    expect(pool.stats()).toMatchObject({ liveKvBytes: 100, peakLiveKvBytes: 100, snapshots: 2, snapshotsDropped: 1, evictions: 3 });
    expect(pool.take(b!)?.tokens).toEqual(Int32Array.of(1, 2, 3));
    expect(pool.stats()).toMatchObject({ restores: 1, snapshots: 1, peakSnapshotBytes: 20 });
  });

  it('never evicts a busy member: a claim waits for a running job to end, then evicts it', async () => {
    const pool = new KvSnapshotPool({ model: 'npc-model', kvMemoryBudget: 100 });
    const a = new Member('a', pool, 60);
    const b = new Member('b', pool, 60);
    const gate = deferred();
    const running = a.run(pool, gate.promise);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.allocated).toBe(true);
    const waiting = b.run(pool);
    await new Promise((resolve) => setImmediate(resolve));
    expect([a.allocated, b.allocated]).toEqual([true, false]);
    expect(pool.stats().evictions).toBe(0);
    gate.resolve();
    await running;
    await waiting;
    expect([a.allocated, b.allocated]).toEqual([false, true]);
    expect(pool.stats()).toMatchObject({ evictions: 1, peakLiveKvBytes: 60 });
  });

  it('fails with InsufficientMemory naming the numbers when the claim cannot fit, evicting nothing for it', async () => {
    const pool = new KvSnapshotPool({ model: 'npc-model', kvMemoryBudget: 100 });
    const a = new Member('a', pool, 60);
    await a.run(pool);
    const huge = new Member('huge', pool, 101).run(pool);
    await expect(huge).rejects.toMatchObject({ errorName: 'InsufficientMemory' });
    await expect(huge).rejects.toThrow(/needs 101 more bytes .*kvMemoryBudget of 100 bytes/);
    expect(a.allocated).toBe(true);
    expect(pool.stats().evictions).toBe(0);
  });

  it('a waiting claim gives up with Aborted when its signal aborts', async () => {
    const pool = new KvSnapshotPool({ model: 'm', kvMemoryBudget: 100 });
    const a = new Member('a', pool, 60);
    const b = new Member('b', pool, 60);
    const gate = deferred();
    const running = a.run(pool, gate.promise);
    await new Promise((resolve) => setImmediate(resolve));
    const controller = new AbortController();
    const waiting = pool.admit(b, { peakBytes: 60, slot: false }, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ errorName: 'Aborted' });
    gate.resolve();
    await running;
    expect(pool.stats().evictions).toBe(0);
  });

  it('counts claims of running jobs before they allocate, so concurrent claims cannot overshoot together', async () => {
    const pool = new KvSnapshotPool({ model: 'm', kvMemoryBudget: 100 });
    const a = new Member('a', pool, 60);
    const b = new Member('b', pool, 60);
    let maxLive = 0;
    const hold = deferred();
    // Both claim in the same tick: the second sees the first's claim although nothing is allocated yet.
    const both = Promise.all([a.run(pool, hold.promise), b.run(pool)]);
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      maxLive = Math.max(maxLive, pool.liveKvBytes());
    }
    expect([a.allocated, b.allocated]).toEqual([true, false]);
    hold.resolve();
    await both;
    expect(maxLive).toBe(60);
    expect(pool.stats().peakLiveKvBytes).toBe(60);
  });

  it('without a budget never evicts; the snapshot cap defaults to 4 × kvMemoryBudget', async () => {
    const unlimited = new KvSnapshotPool({ model: 'm' });
    const members = [1, 2, 3].map((n) => new Member(`m${n}`, unlimited, 1000));
    for (const member of members) await member.run(unlimited);
    expect(members.every((m) => m.allocated)).toBe(true);
    expect(unlimited.stats()).toMatchObject({ kvMemoryBudget: null, snapshotMemoryBudget: null, evictions: 0, liveKvBytes: 3000 });
    expect(new KvSnapshotPool({ model: 'm', kvMemoryBudget: 1000 }).snapshotMemoryBudget).toBe(4000);
  });
});
