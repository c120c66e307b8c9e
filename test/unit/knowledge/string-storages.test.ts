import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LlamaDialogError } from '../../../src/errors.js';
import { StringStorageRegistry } from '../../../src/knowledge/string-storage-registry.js';
import { isKeyedStorage, type KeyedStringStorage } from '../../../src/knowledge/string-storage.js';
import { MAX_STORAGE_FILE_BYTES } from '../../../src/knowledge/storage-root.js';
import { refusal } from '../../kits/refusal.js';

/** A fresh storage root with the given files (string = UTF-8 text, Uint8Array = raw bytes), plus a sibling folder outside it. */
function rootWith(files: Record<string, string | Uint8Array>): { root: string; outside: string } {
  const base = mkdtempSync(join(tmpdir(), 'llama-dialog-storages-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return { root, outside };
}

function keyed(storage: unknown): KeyedStringStorage {
  expect(isKeyedStorage(storage as never)).toBe(true);
  return storage as KeyedStringStorage;
}

function code(action: () => unknown): number {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(LlamaDialogError);
    return (error as LlamaDialogError).code;
  }
  throw new Error('expected a refusal');
}

describe('string storages: inline', () => {
  it('a list keeps its order; the name and kind are recorded', () => {
    const registry = new StringStorageRegistry(undefined);
    const list = registry.create({ name: 'greetings', strings: ['Well met.', 'Hail!', 'Well met.'] });
    expect(list).toMatchObject({ name: 'greetings', kind: 'list', strings: ['Well met.', 'Hail!', 'Well met.'] });
    expect(registry.get('greetings')).toBe(list);
    expect(Object.isFrozen(list.strings)).toBe(true);
  });

  it('a map is sorted by key, and findFirst / findAll look keys up', () => {
    const registry = new StringStorageRegistry(undefined);
    const map = keyed(
      registry.create({ name: 'orders', kind: 'map', entries: [{ id: 'sell', text: 'Name a price.' }, { id: 'buy', text: 'Show the coin.' }, { id: 'repair', text: 'Hand it over.' }] }),
    );
    expect(map.kind).toBe('map');
    expect(map.keys).toEqual(['buy', 'repair', 'sell']);
    expect(map.strings).toEqual(['Show the coin.', 'Hand it over.', 'Name a price.']);
    expect(map.findFirst('repair')).toBe('Hand it over.');
    expect(map.findFirst('steal')).toBeUndefined();
    expect(map.findAll('sell')).toEqual(['Name a price.']);
    expect(map.findAll('steal')).toEqual([]);
  });

  it('a multimap keeps repeated keys in insertion order (the sort is stable)', () => {
    const registry = new StringStorageRegistry(undefined);
    const multimap = keyed(
      registry.create({
        name: 'lines',
        kind: 'multimap',
        entries: [{ id: 'b', text: 'b1' }, { id: 'a', text: 'a1' }, { id: 'b', text: 'b2' }, { id: 'a', text: 'a2' }, { id: 'b', text: 'b3' }],
      }),
    );
    expect(multimap.keys).toEqual(['a', 'a', 'b', 'b', 'b']);
    expect(multimap.strings).toEqual(['a1', 'a2', 'b1', 'b2', 'b3']);
    expect(multimap.findFirst('b')).toBe('b1');
    expect(multimap.findAll('b')).toEqual(['b1', 'b2', 'b3']);
    expect(multimap.findAll('c')).toEqual([]);
  });

  it('bad names are 7001, duplicates 7002', () => {
    const registry = new StringStorageRegistry(undefined);
    for (const name of ['', '.hidden', '..', 'a/b', 'a\\b', 'with space', 'x'.repeat(129), 42]) {
      expect(refusal(() => registry.create({ name: name as string, strings: ['a'] }))).toBe('InvalidStorageName');
    }
    expect(code(() => registry.create({ name: '.x', strings: ['a'] }))).toBe(7001);
    registry.create({ name: 'lore-1.v2_final', strings: ['a'] });
    expect(code(() => registry.create({ name: 'lore-1.v2_final', strings: ['b'] }))).toBe(7002);
    registry.destroy('lore-1.v2_final');
    expect(registry.create({ name: 'lore-1.v2_final', strings: ['b'] }).strings).toEqual(['b']);
  });

  it('bad inline data is 7003: empty, not strings, duplicate map key, bad entries, entries without a keyed kind', () => {
    const registry = new StringStorageRegistry(undefined);
    const bad = (spec: Record<string, unknown>) => refusal(() => registry.create({ name: 'x', ...spec }));
    expect(bad({ strings: [] })).toBe('InvalidStorageData');
    expect(bad({ strings: ['a', 3] })).toBe('InvalidStorageData');
    expect(bad({ kind: 'map', strings: ['a'] })).toBe('InvalidStorageData');
    expect(bad({ kind: 'map', entries: [] })).toBe('InvalidStorageData');
    expect(bad({ kind: 'map', entries: [{ id: 'a', text: '1' }, { id: 'a', text: '2' }] })).toBe('InvalidStorageData');
    expect(bad({ kind: 'map', entries: [{ id: '', text: '1' }] })).toBe('InvalidStorageData');
    expect(bad({ kind: 'map', entries: [{ id: 'a', txt: '1' }] })).toBe('InvalidStorageData');
    expect(bad({ kind: 'multimap', entries: ['a'] })).toBe('InvalidStorageData');
    expect(bad({ entries: [{ id: 'a', text: '1' }] })).toBe('InvalidStorageData');
    expect(bad({ strings: ['x'.repeat(MAX_STORAGE_FILE_BYTES + 1)] })).toBe('InvalidStorageData');
    expect(code(() => registry.create({ name: 'x', strings: [] }))).toBe(7003);
    expect(registry.list()).toEqual([]);
  });

  it('a spec with no source, two sources or an unknown field is InvalidArgument', () => {
    const registry = new StringStorageRegistry(undefined);
    expect(refusal(() => registry.create({ name: 'x' }))).toBe('InvalidArgument');
    expect(refusal(() => registry.create({ name: 'x', strings: ['a'], path: 'a.txt' }))).toBe('InvalidArgument');
    expect(refusal(() => registry.create({ name: 'x', strings: ['a'], colour: 'red' } as never))).toBe('InvalidArgument');
    expect(refusal(() => registry.create(null as never))).toBe('InvalidArgument');
  });
});

describe('string storages: files under the storage root', () => {
  it('.txt is a list: UTF-8, one value per line, # comments and blank lines skipped, CRLF accepted', () => {
    const { root } = rootWith({ 'lines/greetings.txt': '\uFEFF# greetings of the forge\r\nWell met.\r\n\r\n  # indented comment\nHail, traveller!\n  Spaced value  \nÆsir be with you ✓\n' });
    const registry = new StringStorageRegistry(root);
    const list = registry.create({ name: 'greetings', path: 'lines/greetings.txt' });
    expect(list.kind).toBe('list');
    expect(list.strings).toEqual(['Well met.', 'Hail, traveller!', 'Spaced value', 'Æsir be with you ✓']);
  });

  it('.json is a map and .mm.json a multimap: arrays of {id, text}, metadata ignored', () => {
    const { root } = rootWith({
      'intents.json': JSON.stringify([{ id: 'buy', text: 'Offer the wares.', metadata: { weight: 2 } }, { id: 'greet', text: 'Nod.' }]),
      'barks.mm.json': JSON.stringify([{ id: 'idle', text: 'Hmm.' }, { id: 'idle', text: 'Where is that hammer?' }]),
    });
    const registry = new StringStorageRegistry(root);
    const map = keyed(registry.create({ name: 'intents', path: 'intents.json' }));
    expect(map.kind).toBe('map');
    expect(map.findFirst('buy')).toBe('Offer the wares.');
    const multimap = keyed(registry.create({ name: 'barks', path: 'barks.mm.json', kind: 'multimap' }));
    expect(multimap.kind).toBe('multimap');
    expect(multimap.findAll('idle')).toEqual(['Hmm.', 'Where is that hammer?']);
  });

  it('bad file data is 7003: not UTF-8, empty, only comments, bad JSON, wrong shape, duplicate map id, unknown ending, too large', () => {
    const { root } = rootWith({
      'latin1.txt': new Uint8Array([0x43, 0x61, 0x66, 0xe9, 0x0a]),
      'empty.txt': '',
      'comments.txt': '# nothing\n\n   \n',
      'broken.json': '[{"id": "a", "text": "b"',
      'object.json': '{"a": "b"}',
      'numbers.mm.json': '[{"id": 1, "text": "b"}]',
      'empty.json': '[]',
      'dupe.json': JSON.stringify([{ id: 'a', text: '1' }, { id: 'a', text: '2' }]),
      'notes.md': 'hello',
      'huge.txt': new Uint8Array(MAX_STORAGE_FILE_BYTES + 1).fill(0x61),
    });
    const registry = new StringStorageRegistry(root);
    for (const path of ['latin1.txt', 'empty.txt', 'comments.txt', 'broken.json', 'object.json', 'numbers.mm.json', 'empty.json', 'dupe.json', 'notes.md', 'huge.txt']) {
      expect([path, refusal(() => registry.create({ name: 'x', path }))]).toEqual([path, 'InvalidStorageData']);
    }
    expect(() => registry.create({ name: 'x', path: 'latin1.txt' })).toThrow(/not valid UTF-8/);
    // The same file as a multimap is fine: only a map needs unique ids.
    const { root: other } = rootWith({ 'dupe.mm.json': JSON.stringify([{ id: 'a', text: '1' }, { id: 'a', text: '2' }]) });
    expect(new StringStorageRegistry(other).create({ name: 'x', path: 'dupe.mm.json' }).strings).toEqual(['1', '2']);
  });

  it('absolute paths, .. escapes and symlinks out of the root are 3009; a path that stays inside is fine', () => {
    const { root, outside } = rootWith({ 'sub/inside.txt': 'in' });
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    symlinkSync(join(outside, 'secret.txt'), join(root, 'link.txt'));
    const registry = new StringStorageRegistry(root);
    for (const path of [join(outside, 'secret.txt'), '/etc/hosts.txt', '\\\\server\\share\\a.txt', 'C:\\x.txt', '../outside/secret.txt', 'sub/../../outside/secret.txt', 'sub\\..\\..\\outside\\secret.txt', 'link.txt']) {
      expect([path, refusal(() => registry.create({ name: 'x', path }))]).toEqual([path, 'StoragePathEscape']);
    }
    expect(code(() => registry.create({ name: 'x', path: '../outside/secret.txt' }))).toBe(3009);
    expect(registry.create({ name: 'x', path: 'sub/../sub/inside.txt' }).strings).toEqual(['in']);
  });

  it('a missing file is 3010, also without a storage root; the wrong kind for a file is 3011', () => {
    const { root } = rootWith({ 'a.txt': 'one' });
    const registry = new StringStorageRegistry(root);
    expect(code(() => registry.create({ name: 'x', path: 'missing.txt' }))).toBe(3010);
    expect(refusal(() => registry.create({ name: 'x', path: 'missing.json' }))).toBe('StorageFileNotFound');
    expect(refusal(() => new StringStorageRegistry(undefined).create({ name: 'x', path: 'a.txt' }))).toBe('StorageFileNotFound');
    expect(code(() => registry.create({ name: 'x', path: 'a.txt', kind: 'map' }))).toBe(3011);
  });

  it('an inline storage named like a file under the root is 7004', () => {
    const { root } = rootWith({ 'greetings.txt': 'Hail!' });
    const registry = new StringStorageRegistry(root);
    expect(code(() => registry.create({ name: 'greetings.txt', strings: ['other'] }))).toBe(7004);
    expect(registry.create({ name: 'greetings', strings: ['other'] }).strings).toEqual(['other']);
  });

  it('node references resolve a session name first, then a file path; neither is 3010', () => {
    const { root } = rootWith({ 'greetings.txt': 'Hail!' });
    const registry = new StringStorageRegistry(root);
    const named = registry.create({ name: 'greetings', strings: ['named'] });
    expect(registry.resolveReference('greetings')).toBe(named);
    expect(registry.resolveReference('greetings.txt').strings).toEqual(['Hail!']);
    expect(refusal(() => registry.resolveReference('nothing'))).toBe('StorageFileNotFound');
    expect(refusal(() => registry.resolveReference('../greetings.txt'))).toBe('StoragePathEscape');
  });
});
