import { LlamaDialogError } from '../errors.js';
import { KeyedStorage } from './keyed-storage.js';
import type { StorageEntry } from './string-storage.js';

/** Unique keys → texts (from inline entries or a `.json` file). */
export class MapStorage extends KeyedStorage {
  readonly kind = 'map' as const;

  /** @throws LlamaDialogError InvalidStorageData (7003) for a key given twice. */
  constructor(name: string, entries: readonly StorageEntry[]) {
    super(name, entries);
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
}
