import { LlamaDialogError } from '../errors.js';
import { SortedEntries } from './sorted-entries.js';
import type { KeyedStringStorage, StorageEntry } from './string-storage.js';

/** Unique keys → texts (from inline entries or a `.json` file). */
export class MapStorage implements KeyedStringStorage {
  readonly kind = 'map' as const;
  private readonly entries: SortedEntries;

  /** @throws LlamaDialogError InvalidStorageData (7003) for a key given twice. */
  constructor(
    readonly name: string,
    entries: readonly StorageEntry[],
  ) {
    this.entries = new SortedEntries(entries);
    const keys = this.entries.keys;
    for (let index = 1; index < keys.length; index++) {
      if (keys[index] === keys[index - 1]) {
        throw new LlamaDialogError(
          'InvalidStorageData',
          `string storage "${name}": key ${JSON.stringify(keys[index])} appears more than once; a map needs unique keys (use a multimap, .mm.json, for repeated keys)`,
        );
      }
    }
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
