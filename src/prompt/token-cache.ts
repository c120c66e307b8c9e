/**
 * Text → token ids, bounded; when full, the oldest half is forgotten (Map keeps insertion order). Shared by the
 * prompt assemblers of one model so a line is tokenized once per model, whichever node replays it.
 * Cached arrays are shared: never mutate them.
 */
export class TokenCache {
  private readonly entries = new Map<string, Int32Array>();
  hits = 0;
  misses = 0;

  /** @param capacity most entries kept (default 16384). */
  constructor(private readonly capacity = 16384) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string, compute: () => Int32Array): Int32Array {
    const cached = this.entries.get(key);
    if (cached !== undefined) {
      this.hits++;
      return cached;
    }
    this.misses++;
    const tokens = compute();
    if (this.entries.size >= this.capacity) this.evictOldestHalf();
    this.entries.set(key, tokens);
    return tokens;
  }

  clear(): void {
    this.entries.clear();
  }

  private evictOldestHalf(): void {
    let toDrop = Math.ceil(this.entries.size / 2);
    for (const key of this.entries.keys()) {
      if (toDrop-- <= 0) break;
      this.entries.delete(key);
    }
  }
}
