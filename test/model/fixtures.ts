// Shared helpers of the model tier, now in the test kit (test/kits/models.ts); re-exported for the model tests.
export { TEST_THREADS, concat, loadTinyModel, syntheticPrompt } from '../kits/models.js';
