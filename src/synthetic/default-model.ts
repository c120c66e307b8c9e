import { accessSync, constants, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { packageRoot } from '../native/loader.js';
import { SYNTHETIC_MODEL_VERSION, writeSyntheticModel } from './synthetic-model.js';
import { resolveVocabPath } from './synthetic-vocab.js';
import { ProgressBar, type ProgressStream } from '../util/progress-bar.js';

/**
 * Folder for generated models: `$LLAMA_DIALOG_CACHE/models` when set; else `.cache/models` in the package
 * (git-ignored) when it can be written, as in a clone; else `~/.cache/llama-dialog/models` (an installed package
 * may sit in a read-only folder).
 */
export function modelCacheFolder(env: NodeJS.ProcessEnv = process.env): string {
  if (env.LLAMA_DIALOG_CACHE) return join(resolve(env.LLAMA_DIALOG_CACHE), 'models');
  const root = packageRoot();
  if (isWritable(root)) return join(root, '.cache', 'models');
  return join(homedir(), '.cache', 'llama-dialog', 'models');
}

/** Path of the default model (chat, inspect, examples and the benchmark): synthetic `small` preset, Llama-3 tokenizer, seed 0. */
export function defaultModelPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(modelCacheFolder(env), `synthetic-small-llama-bpe-v${SYNTHETIC_MODEL_VERSION}-seed0.gguf`);
}

/**
 * Returns the default model, generating it first when it is not cached (a few hundred MB, seconds;
 * progress on `progress`). The file name carries the generator's version, so a new generator makes a new file.
 * @throws LlamaDialogError InvalidArgument when llama.cpp's vocabulary files are missing (fetch llama.cpp first).
 */
export async function ensureDefaultModel(
  options: { progress?: ProgressStream | null; log?: (line: string) => void } = {},
): Promise<{ path: string; generated: boolean }> {
  const path = defaultModelPath();
  if (existsSync(path)) return { path, generated: false };
  mkdirSync(dirname(path), { recursive: true });
  options.log?.(`[model] generating the synthetic "small" model once into ${path}`);
  const stream = options.progress === undefined ? process.stderr : options.progress;
  let bar: ProgressBar | undefined;
  await writeSyntheticModel({
    vocabPath: resolveVocabPath('llama-bpe'),
    preset: 'small',
    outPath: path,
    seed: 0,
    onProgress: (progress) => {
      if (stream === null) return;
      bar ??= new ProgressBar({
        total: progress.totalBytes,
        label: 'synthetic model',
        stream,
        formatAmount: (done, total) => `${(done / 2 ** 20).toFixed(0)}/${(total / 2 ** 20).toFixed(0)} MiB`,
      });
      bar.update(progress.bytesWritten);
    },
  });
  bar?.finish();
  return { path, generated: true };
}

function isWritable(folder: string): boolean {
  try {
    accessSync(folder, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
