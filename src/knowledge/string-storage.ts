/** The three kinds of string storage (the reference's StringStorageKind: List 0, Map 1, Multimap 2). */
export const STRING_STORAGE_KINDS = ['list', 'map', 'multimap'] as const;
export type StringStorageKind = (typeof STRING_STORAGE_KINDS)[number];

/**
 * A named, immutable collection of strings. Every kind has the list view `strings`, which is all nodes like
 * CannedResponse and Guardrail read; keyed kinds (Map, Multimap) add lookups by key.
 */
export interface StringStorage {
  readonly name: string;
  readonly kind: StringStorageKind;
  /** The list view. For Map and Multimap: the texts in key order (stable within a key). */
  readonly strings: readonly string[];
}

/** A Map or Multimap: entries kept sorted by key, duplicates (Multimap only) in insertion order. */
export interface KeyedStringStorage extends StringStorage {
  readonly kind: 'map' | 'multimap';
  /** Keys in the same order as `strings`. */
  readonly keys: readonly string[];
  /** The first text stored under `key` (in insertion order), or undefined. O(log n). */
  findFirst(key: string): string | undefined;
  /** Every text stored under `key`, in insertion order ([] when none). O(log n + hits). */
  findAll(key: string): readonly string[];
}

/** One keyed entry, as given inline and as read from `.json` / `.mm.json` files. */
export interface StorageEntry {
  readonly id: string;
  readonly text: string;
}

export function isKeyedStorage(storage: StringStorage): storage is KeyedStringStorage {
  return storage.kind === 'map' || storage.kind === 'multimap';
}
