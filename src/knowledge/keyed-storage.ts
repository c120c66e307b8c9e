import { SortedEntries } from './sorted-entries.js';
import type { KeyedStringStorage, StorageEntry } from './string-storage.js';

/** What a map and a multimap share: entries kept sorted by key (stable within a key) and looked up by it. */
export abstract class KeyedStorage implements KeyedStringStorage {
  abstract readonly kind: 'map' | 'multimap';
  protected readonly entries: SortedEntries;

  protected constructor(
    readonly name: string,
    entries: readonly StorageEntry[],
  ) {
    this.entries = new SortedEntries(entries);
  }

  get keys(): readonly string[] {
    return this.entries.keys;
  }

  get strings(): readonly string[] {
    return this.entries.texts;
  }

  findFirst(key: string): string | undefined {
    return this.entries.first(key);
  }

  findAll(key: string): readonly string[] {
    return this.entries.all(key);
  }
}
