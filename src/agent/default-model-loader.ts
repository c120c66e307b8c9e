import { LlamaDialogError } from '../errors.js';
import type { ModelLoader, RuntimeModel } from './model-port.js';

// Resolved at run time so that the graph runtime (and its unit tests) never load the native addon unless a real
// model is actually requested.
const engineModule = '../engine/model.js';

/** Loads a GGUF with the engine (native addon). */
export const engineModelLoader: ModelLoader = async (options) => {
  let engine: { loadModel?: (options: unknown) => Promise<RuntimeModel> };
  try {
    engine = (await import(engineModule)) as typeof engine;
  } catch (error) {
    throw new LlamaDialogError('ModelLoadFailed', `the inference engine is not available: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (typeof engine.loadModel !== 'function') {
    throw new LlamaDialogError('ModelLoadFailed', 'the inference engine does not export loadModel');
  }
  return engine.loadModel(options);
};
