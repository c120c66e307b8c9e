import type { StorageEntry } from './string-storage.js';

/** Code-unit order: the same on every platform and locale, unlike localeCompare. */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Entries sorted by key with a stable sort, so entries sharing a key keep their insertion order; lookups are binary
 * searches. Shared by Map and Multimap, which differ only in whether a key may repeat.
 */
export class SortedEntries {
  readonly keys: readonly string[];
  readonly texts: readonly string[];

  constructor(entries: readonly StorageEntry[]) {
    const sorted = [...entries].sort((a, b) => compareKeys(a.id, b.id));
    this.keys = Object.freeze(sorted.map((entry) => entry.id));
    this.texts = Object.freeze(sorted.map((entry) => entry.text));
    Object.freeze(this);
  }

  /** Index of the first entry whose key is not below `key`. */
  lowerBound(key: string): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (compareKeys(this.keys[middle] as string, key) < 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  first(key: string): string | undefined {
    const index = this.lowerBound(key);
    return this.keys[index] === key ? this.texts[index] : undefined;
  }

  all(key: string): string[] {
    const found: string[] = [];
    for (let index = this.lowerBound(key); index < this.keys.length && this.keys[index] === key; index++) {
      found.push(this.texts[index] as string);
    }
    return found;
  }
}
