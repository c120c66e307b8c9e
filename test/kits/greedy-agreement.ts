// The near-tie rule for comparing greedy replies of two engine paths (cold vs reused cache, own vs shared context).
import { expect } from 'vitest';
import type { Model } from '../../src/engine/model.js';

/**
 * Greedy replies of two paths agree token for token, except after a near-tie of the reference itself: llama.cpp's
 * CPU kernels may sum in another order for another batch shape (a reused cache decodes a shorter suffix), which moves
 * logits by rounding only. So: identical up to the first difference, and there the two tokens' log-probabilities in
 * a fresh context on the reference's prefix differ by less than `tie`. A wrong cache (a lost position, a stale
 * window) differs at once and by far more. Returns the position of the first difference, or -1.
 */
export async function expectSameGreedy(
  model: Model,
  received: Int32Array,
  reference: Int32Array,
  prompt: Int32Array,
  options: { tie: number; threads: number; contextSize?: number },
): Promise<number> {
  const n = Math.min(received.length, reference.length);
  let k = 0;
  while (k < n && received[k] === reference[k]) k++;
  if (k === received.length && k === reference.length) return -1;
  expect(k, 'the replies differ in length only').toBeLessThan(n);
  const context = await model.createContext({ contextSize: options.contextSize ?? prompt.length + n + 16, threads: options.threads });
  try {
    const prefix = Int32Array.from([...prompt, ...reference.subarray(0, k)]);
    const [a, b] = await context.scoreNext(prefix, Int32Array.from([reference[k]!, received[k]!]));
    expect(Math.abs(a! - b!), `token ${k}: ${reference[k]} vs ${received[k]} is not a near-tie`).toBeLessThan(options.tie);
  } finally {
    await context.dispose();
  }
  return k;
}
