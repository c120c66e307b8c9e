// The model fixtures moved to test/kits/models.ts; this re-export keeps the tests that import them here working.
export { TEST_MODEL_SEED, ensureTestModel, modelCacheDir, testModelPath } from '../kits/models.js';
