/**
 * Model fixtures of the tests, one import for all tiers: the cached synthetic GGUFs (generated on first use) and the
 * tiny model loaded by the real engine, with deterministic prompts. The definitions still live in test/helpers and
 * test/model/fixtures, which existing tests import; new tests import from here.
 */
export { TEST_MODEL_SEED, ensureTestModel, modelCacheDir, testModelPath } from '../helpers/models.js';
export { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from '../model/fixtures.js';
