// Shared set-up of the real-model tier (test/real/): the pinned real GGUFs, fetched into the model cache by
// scripts/fetch-test-models.mjs (npm test runs it before vitest; a test file run alone fetches what is missing).
import { existsSync, statSync } from 'node:fs';
import { fetchTestModels } from '../../scripts/fetch-test-models.mjs';
import { findManifestModel, manifestModelPath } from '../../src/models/model-cache.js';

/** The real models of test-models.json. */
export type RealModelName = 'smollm2' | 'gemma3-270m' | 'minilm';

/** Threads per real-model context: the tier runs on 2 cores, one file at a time per fork. */
export const REAL_TEST_THREADS = 2;

/**
 * Path of a real model in the cache. A file of the pinned size is taken as is (the fetch script checked its sha256
 * when it wrote it, and npm test runs the script first); otherwise the script fetches it, or throws with the fix.
 */
export async function realModelPath(name: RealModelName): Promise<string> {
  const model = findManifestModel(name);
  if (model === undefined) throw new Error(`test-models.json has no model named ${name}`);
  const path = manifestModelPath(model);
  if (existsSync(path) && statSync(path).size === model.size) return path;
  const paths = await fetchTestModels([name]);
  return paths[name]!;
}
