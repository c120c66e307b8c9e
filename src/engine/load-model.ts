/** `loadModel`: the entry point of the engine. */
import { resolve } from 'node:path';
import { callNative } from '../native/binding.js';
import { loadNativeAddon } from '../native/loader.js';
import { loadModelOptionsSchema, parseOptions } from './engine-options.js';
import { Model } from './model.js';

export interface LoadModelOptions {
  /** Path of a GGUF file (relative paths resolve against the working directory). */
  path: string;
  /** Layers to offload to the GPU; -1 (default) = all that the backend takes. Ignored by CPU builds. */
  gpuLayers?: number;
  /** Memory-map the weights (default: llama.cpp decides, normally yes). */
  useMmap?: boolean;
  /** Load only the tokenizer: tokenize/detokenize work, contexts cannot be created. Default false. */
  vocabOnly?: boolean;
}

/**
 * Loads a GGUF model off the JS thread.
 * @throws LlamaDialogError InvalidArgument for bad options; ModelLoadFailed when the file is missing,
 *   is not a GGUF, is truncated, or llama.cpp rejects it (the message says which);
 *   NativeBinaryMissing when the addon is not built.
 */
export async function loadModel(options: LoadModelOptions): Promise<Model> {
  const parsed = parseOptions(loadModelOptionsSchema, options, 'loadModel options');
  const addon = loadNativeAddon();
  const path = resolve(parsed.path);
  const handle = await callNative(() =>
    addon.loadModel(path, { gpuLayers: parsed.gpuLayers, useMmap: parsed.useMmap, vocabOnly: parsed.vocabOnly }),
  );
  return new Model(handle, path);
}
