import { LlamaDialogError } from '../errors.js';

export const MAX_STORAGE_NAME_LENGTH = 128;

/**
 * Session storage names: 1–128 characters from `A-Z a-z 0-9 _ . -`, not starting with a dot. No separators, so a name
 * never reads as a path into a folder; a leading dot is reserved (`.`, `..` and hidden files).
 * @throws LlamaDialogError InvalidStorageName (7001).
 */
export function checkStorageName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new LlamaDialogError('InvalidStorageName', 'a string storage name must be a non-empty string');
  }
  if (name.length > MAX_STORAGE_NAME_LENGTH) {
    throw new LlamaDialogError('InvalidStorageName', `string storage name has ${name.length} characters; the limit is ${MAX_STORAGE_NAME_LENGTH}`);
  }
  if (name.startsWith('.')) {
    throw new LlamaDialogError('InvalidStorageName', `string storage name ${JSON.stringify(name)} is reserved: names may not start with a dot`);
  }
  if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
    throw new LlamaDialogError(
      'InvalidStorageName',
      `string storage name ${JSON.stringify(name)} has a character outside A-Z a-z 0-9 _ . - (no spaces or path separators)`,
    );
  }
  return name;
}
