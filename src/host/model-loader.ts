import { loadModel } from '../engine/load-model.js';
import type { RuntimeModel } from '../engine/types.js';

/** How a model file is opened; the default is the engine's `loadModel`. */
export interface ModelLoadOptions {
  path: string;
  gpuLayers?: number;
  useMmap?: boolean;
}

export type ModelLoader = (options: ModelLoadOptions) => Promise<RuntimeModel>;

/**
 * Loads a GGUF with the engine. The native addon is only loaded on the first call, so code that never loads a
 * real model (unit tests with fakes) never needs the binary.
 */
export const engineModelLoader: ModelLoader = async (options): Promise<RuntimeModel> => loadModel(options);
