import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LlamaDialogError } from '../errors.js';

const VOCAB_PREFIX = 'ggml-vocab-';
const VOCAB_SUFFIX = '.gguf';

/**
 * The llama.cpp source folder: `LLAMA_CPP_DIR` when set, else `deps/llama.cpp` of this package
 * (where `npm run fetch:llama` puts the pinned release). Not checked for existence.
 */
export function defaultLlamaCppDir(): string {
  const custom = process.env.LLAMA_CPP_DIR;
  if (custom !== undefined && custom !== '') return resolve(custom);
  // This file is src/engine/*.ts or dist/engine/*.js: the package root is two levels up either way.
  return fileURLToPath(new URL('../../deps/llama.cpp', import.meta.url));
}

/** Names of the vocab-only GGUFs llama.cpp ships (`models/ggml-vocab-<name>.gguf`), sorted. */
export function listVocabNames(llamaCppDir = defaultLlamaCppDir()): string[] {
  const folder = join(llamaCppDir, 'models');
  if (!existsSync(folder)) return [];
  return readdirSync(folder)
    .filter((file) => file.startsWith(VOCAB_PREFIX) && file.endsWith(VOCAB_SUFFIX))
    .map((file) => file.slice(VOCAB_PREFIX.length, -VOCAB_SUFFIX.length))
    .sort();
}

/**
 * Turns a vocabulary argument into a file path: an existing file, or anything that looks like a path
 * (has a slash or ends in `.gguf`), is used as given; a bare name such as `llama-bpe` means
 * `<llama.cpp>/models/ggml-vocab-llama-bpe.gguf`.
 * @throws LlamaDialogError `InvalidArgument` when a bare name matches no vocabulary file (the message
 *   lists the names that exist).
 */
export function resolveVocabPath(nameOrPath: string, llamaCppDir = defaultLlamaCppDir()): string {
  if (existsSync(nameOrPath) || /[\\/]/.test(nameOrPath) || nameOrPath.endsWith(VOCAB_SUFFIX)) {
    return nameOrPath;
  }
  const path = join(llamaCppDir, 'models', `${VOCAB_PREFIX}${nameOrPath}${VOCAB_SUFFIX}`);
  if (existsSync(path)) return path;
  const known = listVocabNames(llamaCppDir);
  throw new LlamaDialogError(
    'InvalidArgument',
    known.length > 0
      ? `unknown vocabulary "${nameOrPath}"; known names: ${known.join(', ')}`
      : `unknown vocabulary "${nameOrPath}": no vocabulary files in ${join(llamaCppDir, 'models')} ` +
          '(run `npm run fetch:llama`, set LLAMA_CPP_DIR, or pass a path to a vocab-only .gguf)',
  );
}
