import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file is test/helpers/llama-cpp.ts). */
export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The llama.cpp source folder tests read vocabularies from: `LLAMA_CPP_DIR` when set, else
 * `<repo>/deps/llama.cpp` (created by `npm run fetch:llama`).
 * @throws Error naming both options when the folder does not exist.
 */
export function llamaCppDir(): string {
  const custom = process.env.LLAMA_CPP_DIR;
  const dir = custom !== undefined && custom !== '' ? resolve(custom) : join(repoRoot, 'deps', 'llama.cpp');
  if (!existsSync(join(dir, 'models'))) {
    throw new Error(`llama.cpp source not found at ${dir}: run \`npm run fetch:llama\` or set LLAMA_CPP_DIR`);
  }
  return dir;
}

/**
 * Path of llama.cpp's vocab-only GGUF `models/ggml-vocab-<name>.gguf` (e.g. `llama-bpe`, `llama-spm`).
 * @throws Error when that file does not exist.
 */
export function vocabPath(name: string): string {
  const path = join(llamaCppDir(), 'models', `ggml-vocab-${name}.gguf`);
  if (!existsSync(path)) throw new Error(`no vocabulary file ${path}`);
  return path;
}
