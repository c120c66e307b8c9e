import { LlamaDialogError } from '../errors.js';
import { ListStorage } from './list-storage.js';
import { MapStorage } from './map-storage.js';
import { MultimapStorage } from './multimap-storage.js';
import { checkStorageEntries, decodeStorageText, parseEntriesJson, parseTextList, storageKindOfFile } from './storage-file-formats.js';
import { checkStorageName } from './storage-name.js';
import { MAX_STORAGE_FILE_BYTES, StorageRoot } from './storage-root.js';
import type { StorageEntry, StringStorage, StringStorageKind } from './string-storage.js';
import { parseStringStorageSpec } from './string-storage-spec.js';

function buildKeyed(name: string, kind: 'map' | 'multimap', entries: readonly StorageEntry[]): StringStorage {
  return kind === 'map' ? new MapStorage(name, entries) : new MultimapStorage(name, entries);
}

/** Inline content is held to the same size limit as a file, counted in UTF-16 code units. */
function checkInlineSize(name: string, texts: readonly string[]): void {
  let total = 0;
  for (const text of texts) total += text.length;
  if (total > MAX_STORAGE_FILE_BYTES) {
    throw new LlamaDialogError('InvalidStorageData', `string storage "${name}": ${total} characters inline; the limit is ${MAX_STORAGE_FILE_BYTES}`);
  }
}

/**
 * A session's named string storages and its storage root. Storages are immutable objects: destroying one only drops
 * the session's name for it, so an agent that resolved it at creation keeps using the same object (holding it is the
 * reference count).
 */
export class StringStorageRegistry {
  private readonly byName = new Map<string, StringStorage>();
  private readonly root: StorageRoot | undefined;

  constructor(storageRoot: string | undefined) {
    this.root = storageRoot === undefined ? undefined : new StorageRoot(storageRoot);
  }

  /** The absolute storage root, when one is set. */
  get rootPath(): string | undefined {
    return this.root?.path;
  }

  /**
   * Creates a named storage from a spec (see stringStorageSpecSchema).
   * @throws LlamaDialogError InvalidArgument (bad spec shape); InvalidStorageName (7001); DuplicateStorageName (7002);
   *   InvalidStorageData (7003); StorageNameShadowsFile (7004) for an inline storage named like a file under the
   *   root; StoragePathEscape (3009), StorageFileNotFound (3010), StorageWrongKind (3011) for `path`.
   */
  create(spec: unknown): StringStorage {
    const parsed = parseStringStorageSpec(spec);
    const name = checkStorageName(parsed.name);
    if (this.byName.has(name)) throw new LlamaDialogError('DuplicateStorageName', `a string storage named "${name}" already exists in this session; destroy it first`);
    let storage: StringStorage;
    if (parsed.path !== undefined) {
      storage = this.loadFile(parsed.path, name);
      if (parsed.kind !== undefined && parsed.kind !== storage.kind) {
        throw new LlamaDialogError('StorageWrongKind', `storage file ${JSON.stringify(parsed.path)} holds a ${storage.kind}, not a ${parsed.kind} (the file name's ending decides: .txt list, .json map, .mm.json multimap)`);
      }
    } else {
      // Node params name either a session storage or a file: a name that is both would be read differently by
      // whoever looks at the folder, so it is refused.
      if (this.root?.hasFile(name)) {
        throw new LlamaDialogError('StorageNameShadowsFile', `string storage name "${name}" is also a file under the storage root ${this.root.path}; choose another name`);
      }
      storage = parsed.strings !== undefined ? this.inlineList(name, parsed.kind, parsed.strings) : this.inlineKeyed(name, parsed.kind, parsed.entries as unknown[]);
    }
    this.byName.set(name, storage);
    return storage;
  }

  /** Drops the session's name for a storage; agents holding it keep it. Returns false when there was none. */
  destroy(name: string): boolean {
    return this.byName.delete(name);
  }

  get(name: string): StringStorage | undefined {
    return this.byName.get(name);
  }

  list(): StringStorage[] {
    return [...this.byName.values()];
  }

  clear(): void {
    this.byName.clear();
  }

  /**
   * What a node param `storage` names: a session storage of that name, else a storage file under the root, loaded
   * now (a fresh object each time, named by its path).
   * @throws LlamaDialogError StorageFileNotFound (3010) when it is neither; StoragePathEscape; InvalidStorageData.
   */
  resolveReference(reference: string): StringStorage {
    const named = this.byName.get(reference);
    if (named) return named;
    if (storageKindOfFile(reference) === undefined) {
      throw new LlamaDialogError(
        'StorageFileNotFound',
        `no string storage named "${reference}" in this session (and it is not a .txt, .json or .mm.json file path)`,
      );
    }
    return this.loadFile(reference, reference);
  }

  private loadFile(path: string, name: string): StringStorage {
    if (!this.root) {
      throw new LlamaDialogError('StorageFileNotFound', `storage file ${JSON.stringify(path)}: this session has no storageRoot, so no storage file can be read`);
    }
    const kind = storageKindOfFile(path);
    if (kind === undefined) {
      throw new LlamaDialogError('InvalidStorageData', `storage file ${JSON.stringify(path)}: unknown kind; storage files end in .txt (list), .json (map) or .mm.json (multimap)`);
    }
    const where = JSON.stringify(path);
    const text = decodeStorageText(this.root.read(path), where);
    return kind === 'list' ? new ListStorage(name, parseTextList(text, where)) : buildKeyed(name, kind, parseEntriesJson(text, where));
  }

  private inlineList(name: string, kind: StringStorageKind | undefined, strings: readonly unknown[]): StringStorage {
    if (kind !== undefined && kind !== 'list') {
      throw new LlamaDialogError('InvalidStorageData', `string storage "${name}": a ${kind} takes entries [{ id, text }], not strings`);
    }
    if (strings.length === 0) throw new LlamaDialogError('InvalidStorageData', `string storage "${name}": strings is empty`);
    const index = strings.findIndex((value) => typeof value !== 'string');
    if (index >= 0) throw new LlamaDialogError('InvalidStorageData', `string storage "${name}": strings[${index}] is not a string`);
    checkInlineSize(name, strings as string[]);
    return new ListStorage(name, strings as string[]);
  }

  private inlineKeyed(name: string, kind: StringStorageKind | undefined, entries: readonly unknown[]): StringStorage {
    if (kind !== 'map' && kind !== 'multimap') {
      throw new LlamaDialogError('InvalidStorageData', `string storage "${name}": entries make a map or multimap; set kind to 'map' or 'multimap'`);
    }
    const checked = checkStorageEntries(entries, `"${name}"`);
    checkInlineSize(name, checked.map((entry) => entry.text));
    return buildKeyed(name, kind, checked);
  }
}
