import { SortedEntries } from './sorted-entries.js';
import type { KeyedStringStorage, StorageEntry } from './string-storage.js';

/** Keys → texts where a key may repeat (from inline entries or a `.mm.json` file). */
export class MultimapStorage implements KeyedStringStorage {
  readonly kind = 'multimap' as const;
  private readonly entries: SortedEntries;

  constructor(
    readonly name: string,
    entries: readonly StorageEntry[],
  ) {
    this.entries = new SortedEntries(entries);
    Object.freeze(this);
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
