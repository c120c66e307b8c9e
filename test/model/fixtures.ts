// Shared helpers of the model tier: the cached tiny synthetic model and deterministic prompts.
import { loadModel } from '../../src/engine/load-model.js';
import type { Model } from '../../src/engine/model.js';
import { ensureTestModel } from '../helpers/models.js';

/**
 * CPU threads per test context. One: vitest runs two forks on CI's two cores, and ggml's worker
 * threads spin while they wait, so more threads than cores would only slow every test down.
 */
export const TEST_THREADS = 1;

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
