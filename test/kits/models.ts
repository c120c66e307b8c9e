/**
 * Model fixtures of every test tier: synthetic GGUFs generated once into a shared cache, the tiny model loaded by the
 * real engine, and deterministic prompts. (test/helpers/models.ts and test/model/fixtures.ts re-export these for the
 * tests that still import them there.)
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { SYNTHETIC_BERT_VERSION, writeSyntheticBert } from '../../src/synthetic/synthetic-bert.js';
import { SYNTHETIC_MODEL_VERSION, writeSyntheticModel, type SyntheticPreset } from '../../src/synthetic/synthetic-model.js';
import { repoRoot, vocabPath } from '../helpers/llama-cpp.js';

/** Where generated test models live (git-ignored); shared by all test runs and workers. */
export const modelCacheDir = join(repoRoot, '.cache', 'models');

/** Seed of every cached test model, so all tests see the same weights. */
export const TEST_MODEL_SEED = 0;

/**
 * CPU threads per test context. One: vitest runs two forks on CI's two cores, and ggml's worker
 * threads spin while they wait, so more threads than cores would only slow every test down.
 */
export const TEST_THREADS = 1;

const pending = new Map<string, Promise<string>>();

/** Cache path of a test model; the generator version in the name makes a newer generator write a new file. */
export function testModelPath(preset: SyntheticPreset = 'tiny', vocab = 'llama-bpe'): string {
  return join(modelCacheDir, `synthetic-${preset}-${vocab}-seed${TEST_MODEL_SEED}-v${SYNTHETIC_MODEL_VERSION}.gguf`);
}

/**
 * Path of a synthetic test model, generating it on first use. Safe when several vitest fork workers
 * ask at once: writeSyntheticModel writes a uniquely named temporary file and renames it into place,
 * so a reader sees either no file or a complete one; two workers that race both write identical bytes
 * (same seed) and the later rename simply replaces an equal file.
 */
export function ensureTestModel(preset: SyntheticPreset = 'tiny', vocab = 'llama-bpe'): Promise<string> {
  const path = testModelPath(preset, vocab);
  let promise = pending.get(path);
  if (promise === undefined) {
    promise = (async () => {
      if (existsSync(path)) return path;
      mkdirSync(modelCacheDir, { recursive: true });
      await writeSyntheticModel({ vocabPath: vocabPath(vocab), preset, outPath: path, seed: TEST_MODEL_SEED });
      return path;
    })();
    // A failed attempt must not poison later calls in this worker.
    promise.catch(() => pending.delete(path));
    pending.set(path, promise);
  }
  return promise;
}

/**
 * Path of the tiny synthetic BERT embedder (bge WordPiece vocabulary, random weights, mean pooling), generated on
 * first use with the same write-then-rename safety as {@link ensureTestModel}.
 */
export function ensureTestBert(): Promise<string> {
  return ensureSyntheticBert(false);
}

/** The synthetic BERT as a reranker (rank pooling, a classification head): what `rank()` runs on in the fast tiers. */
export function ensureTestBertReranker(): Promise<string> {
  return ensureSyntheticBert(true);
}

function ensureSyntheticBert(reranker: boolean): Promise<string> {
  const kind = reranker ? 'bert-reranker' : 'bert';
  const path = join(modelCacheDir, `synthetic-${kind}-tiny-bert-bge-seed${TEST_MODEL_SEED}-v${SYNTHETIC_BERT_VERSION}.gguf`);
  let promise = pending.get(path);
  if (promise === undefined) {
    promise = (async () => {
      if (existsSync(path)) return path;
      mkdirSync(modelCacheDir, { recursive: true });
      await writeSyntheticBert({ vocabPath: vocabPath('bert-bge'), outPath: path, seed: TEST_MODEL_SEED, reranker });
      return path;
    })();
    promise.catch(() => pending.delete(path));
    pending.set(path, promise);
  }
  return promise;
}

/** Loads the tiny synthetic llama model (Llama 3 tokenizer), generating it on first use. */
export async function loadTinyModel(): Promise<Model> {
  return loadModel({ path: await ensureTestModel('tiny') });
}

/** `length` ordinary (non-special) token ids, a different sequence for each `seed`. */
export function syntheticPrompt(length: number, seed = 1): Int32Array {
  return Int32Array.from({ length }, (_, i) => 1000 + ((i * 7919 + seed * 104_729) % 100_000));
}

export function concat(...parts: ArrayLike<number>[]): Int32Array {
  return Int32Array.from(parts.flatMap((part) => Array.from(part)));
}
