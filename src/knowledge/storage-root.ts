import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { LlamaDialogError } from '../errors.js';

/**
 * Largest storage file read (16 MiB). A storage is held in memory whole for the life of the agents using it; a bigger
 * file is almost certainly the wrong file, and refusing it is cheaper than finding out from the memory use.
 */
export const MAX_STORAGE_FILE_BYTES = 16 * 2 ** 20;

function escape(path: string, why: string): never {
  throw new LlamaDialogError('StoragePathEscape', `storage path ${JSON.stringify(path)} ${why}; give a path relative to the storage root, inside it`);
}

/** True when `child` is `parent` or lies below it (both absolute and normalized). */
function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * The folder storage files are read from. Paths are relative to it and may not leave it: not absolute, no `..`
 * that climbs out, and no symlink whose target lies outside (checked on the real path), so a graph written by a
 * remote client reads nothing but what the operator put there.
 */
export class StorageRoot {
  readonly path: string;

  constructor(path: string) {
    this.path = resolve(path);
  }

  /**
   * The absolute file for a relative path, checked lexically (no escape).
   * @throws LlamaDialogError StoragePathEscape (3009).
   */
  resolve(relativePath: string): string {
    // Both separators and a drive letter count as absolute on every platform: a graph moves between machines.
    if (isAbsolute(relativePath) || /^[\\/]/.test(relativePath) || /^[A-Za-z]:/.test(relativePath)) escape(relativePath, 'is absolute');
    if (relativePath.includes('\0')) escape(relativePath, 'contains a NUL character');
    const file = resolve(this.path, relativePath.replaceAll('\\', '/'));
    if (!isInside(this.path, file) || file === this.path) escape(relativePath, 'leaves the storage root');
    return file;
  }

  /** True when the path names an existing file under the root (false for escapes and anything missing). */
  hasFile(relativePath: string): boolean {
    try {
      return statSync(this.resolve(relativePath)).isFile();
    } catch {
      return false;
    }
  }

  /**
   * The real path of an existing file under the root (symlinks followed and checked).
   * @throws LlamaDialogError StoragePathEscape (also for a symlink out of the root); StorageFileNotFound (3010) for
   *   nothing there, or a folder.
   */
  existingFile(relativePath: string): string {
    const file = this.resolve(relativePath);
    let real: string;
    try {
      real = realpathSync(file);
    } catch (error) {
      throw new LlamaDialogError('StorageFileNotFound', `storage file ${JSON.stringify(relativePath)} does not exist under the storage root ${this.path}`, { cause: error });
    }
    let realRoot: string;
    try {
      realRoot = realpathSync(this.path);
    } catch (error) {
      throw new LlamaDialogError('StorageFileNotFound', `the storage root ${this.path} does not exist`, { cause: error });
    }
    if (!isInside(realRoot, real)) escape(relativePath, 'is a link to a file outside the storage root');
    const stats = statSync(real);
    if (!stats.isFile()) throw new LlamaDialogError('StorageFileNotFound', `storage path ${JSON.stringify(relativePath)} is not a file`);
    return real;
  }

  /**
   * Reads a storage file whole.
   * @throws LlamaDialogError StoragePathEscape (also for a symlink out of the root); StorageFileNotFound (3010);
   *   InvalidStorageData (7003) for a file over {@link MAX_STORAGE_FILE_BYTES} or one that cannot be read.
   */
  read(relativePath: string): Uint8Array {
    const real = this.existingFile(relativePath);
    const stats = statSync(real);
    if (stats.size > MAX_STORAGE_FILE_BYTES) {
      throw new LlamaDialogError(
        'InvalidStorageData',
        `storage file ${JSON.stringify(relativePath)} has ${stats.size} bytes; the limit is ${MAX_STORAGE_FILE_BYTES} (16 MiB)`,
      );
    }
    try {
      return readFileSync(real);
    } catch (error) {
      throw new LlamaDialogError('InvalidStorageData', `storage file ${JSON.stringify(relativePath)} cannot be read: ${(error as Error).message}`, { cause: error });
    }
  }
}

