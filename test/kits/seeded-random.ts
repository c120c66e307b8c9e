/**
 * The one seeded random source of the tests: the package's mulberry32, so a test conversation and a benchmark
 * workload built from the same seed are the same. Use it instead of Math.random, so every failure replays.
 */
export { seededRandom } from '../../src/util/seeded-random.js';
