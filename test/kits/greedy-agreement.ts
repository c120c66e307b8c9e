// The near-tie rule for comparing greedy replies of two engine paths (cold vs reused cache, own vs shared context).
import { expect } from 'vitest';
import type { Model } from '../../src/engine/model.js';

/**
 * Greedy replies of two paths agree token for token, except after a near-tie of the reference itself: llama.cpp's
 * CPU kernels may sum in another order for another batch shape (a reused cache decodes a shorter suffix), which moves
 * logits by rounding only. So: identical up to the first difference, and there the two tokens' log-probabilities in
 * a fresh context on the reference's prefix differ by less than `tie`. A wrong cache (a lost position, a stale
 * window) differs at once and by far more. Returns the position of the first difference, or -1.
 * `endOfReply`, when given, stands for the token after the last one of a reply that stopped earlier than the other
 * (the end-of-turn token), so that "one stopped, the other went on" is scored like any other divergence; without it
 * a difference in length only fails.
 */
export async function expectSameGreedy(
  model: Model,
  received: Int32Array,
  reference: Int32Array,
  prompt: Int32Array,
  options: { tie: number; threads: number; contextSize?: number; endOfReply?: number; label?: string },
): Promise<number> {
  const n = Math.min(received.length, reference.length);
  let k = 0;
  while (k < n && received[k] === reference[k]) k++;
  if (k === received.length && k === reference.length) return -1;
  const label = options.label === undefined ? '' : `${options.label}: `;
  const expected = reference[k] ?? options.endOfReply;
  const got = received[k] ?? options.endOfReply;
  if (options.endOfReply === undefined) expect(k, `${label}the replies differ in length only`).toBeLessThan(n);
  const context = await model.createContext({ contextSize: options.contextSize ?? prompt.length + n + 16, threads: options.threads });
  try {
    const prefix = Int32Array.from([...prompt, ...reference.subarray(0, k)]);
    const [a, b] = await context.scoreNext(prefix, Int32Array.from([expected!, got!]));
    expect(Math.abs(a! - b!), `${label}token ${k}: ${expected} vs ${got} is not a near-tie`).toBeLessThan(options.tie);
  } finally {
    await context.dispose();
  }
  return k;
}
