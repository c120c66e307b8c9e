import { loadModel } from '../engine/load-model.js';
import type { ModelLoader, RuntimeModel } from './model-port.js';

/**
 * Loads a GGUF with the engine. The native addon is only loaded on the first call, so code that never loads a
 * real model (unit tests with fakes) never needs the binary.
 */
export const engineModelLoader: ModelLoader = async (options): Promise<RuntimeModel> => loadModel(options);
