import { KeyedStorage } from './keyed-storage.js';
import type { StorageEntry } from './string-storage.js';

/** Keys → texts where a key may repeat (from inline entries or a `.mm.json` file). */
export class MultimapStorage extends KeyedStorage {
  readonly kind = 'multimap' as const;

  constructor(name: string, entries: readonly StorageEntry[]) {
    super(name, entries);
    Object.freeze(this);
  }
}
