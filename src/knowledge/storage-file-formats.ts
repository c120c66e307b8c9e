import { LlamaDialogError } from '../errors.js';
import type { StorageEntry, StringStorageKind } from './string-storage.js';

/** Kind a storage file holds, by its name: `.mm.json` → multimap, `.json` → map, `.txt` → list; undefined otherwise. */
export function storageKindOfFile(path: string): StringStorageKind | undefined {
  const lower = path.toLowerCase();
  if (lower.endsWith('.mm.json')) return 'multimap';
  if (lower.endsWith('.json')) return 'map';
  if (lower.endsWith('.txt')) return 'list';
  return undefined;
}

function invalid(where: string, problem: string): never {
  throw new LlamaDialogError('InvalidStorageData', `string storage ${where}: ${problem}`);
}

/**
 * Decodes UTF-8 strictly (a byte-order mark is dropped): a storage file in another encoding would otherwise turn
 * into replacement characters that no pattern or key ever matches.
 * @throws LlamaDialogError InvalidStorageData (7003) for bytes that are not UTF-8.
 */
export function decodeStorageText(bytes: Uint8Array, where: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new LlamaDialogError('InvalidStorageData', `string storage ${where}: the file is not valid UTF-8`, { cause: error });
  }
}

/**
 * A `.txt` list: one value per line (LF or CRLF); blank lines and lines whose first non-blank character is `#` are
 * skipped. Values keep their inner spacing; surrounding whitespace is trimmed.
 * @throws LlamaDialogError InvalidStorageData when no value is left.
 */
export function parseTextList(text: string, where: string): string[] {
  const values: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    const value = line.trim();
    if (value.length === 0 || value.startsWith('#')) continue;
    values.push(value);
  }
  if (values.length === 0) invalid(where, 'the file holds no values (only blank or # comment lines)');
  return values;
}

/**
 * Checks keyed entries given inline or read from JSON: an array of `{id, text}` objects with non-empty string ids and
 * string texts; `metadata` is accepted and ignored, any other field is refused (a misspelt `text` would otherwise be
 * lost silently).
 * @throws LlamaDialogError InvalidStorageData naming the first bad entry.
 */
export function checkStorageEntries(value: unknown, where: string): StorageEntry[] {
  if (!Array.isArray(value)) invalid(where, 'expected a JSON array of { "id": string, "text": string } objects');
  if (value.length === 0) invalid(where, 'the array is empty');
  return value.map((item: unknown, index) => {
    const at = `entry [${index}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) invalid(where, `${at} is not an object`);
    const record = item as Record<string, unknown>;
    for (const field of Object.keys(record)) {
      if (field !== 'id' && field !== 'text' && field !== 'metadata') invalid(where, `${at} has an unknown field "${field}" (allowed: id, text, metadata)`);
    }
    if (typeof record.id !== 'string' || record.id.length === 0) invalid(where, `${at}: "id" must be a non-empty string`);
    if (typeof record.text !== 'string') invalid(where, `${at}: "text" must be a string`);
    return { id: record.id, text: record.text };
  });
}

/** A `.json` / `.mm.json` file: a JSON array of `{id, text, metadata?}`. @throws LlamaDialogError InvalidStorageData. */
export function parseEntriesJson(text: string, where: string): StorageEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new LlamaDialogError('InvalidStorageData', `string storage ${where}: not valid JSON: ${(error as Error).message}`, { cause: error });
  }
  return checkStorageEntries(value, where);
}
