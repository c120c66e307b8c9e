/**
 * The near-tie rule for comparing greedy replies of two engine paths (own context, batched sequence, restored
 * snapshot, copied prefix): identical token for token, except after a near-tie of the reference itself.
 *
 * Why a tie may flip: llama.cpp's CPU kernels may sum a matrix row in another order for another batch shape
 * (n_tokens 1 vs several, a KV cache of another size), which moves logits by rounding only. So two paths agree when
 * they are identical up to their first difference and, there, the two tokens' log-probabilities in the reference
 * (prompt + the common part of the reply) differ by less than NEAR_TIE. A wrong position, seq_id, logits index or
 * a corrupted cache differs at once and by far more.
 */
import { expect } from 'vitest';

/**
 * Largest log-probability gap between two next tokens that still counts as a tie a rounding difference may flip, on
 * the synthetic models' random f16/f32 weights.
 */
export const NEAR_TIE = 0.01;

/**
 * The same on real quantized weights (SmolLM2-135M Q4_1, measured 2026-12-02 on the 2-core dev machine): the prompt's
 * batch size alone (512 vs 7 vs 1 tokens per decode) moved the log-probabilities of the ten likeliest next tokens by
 * −0.034 … +0.193, so the gap between two of them by up to 0.23. A wrong position, sequence or prompt moves it by
 * whole nats.
 */
export const REAL_WEIGHTS_NEAR_TIE = 0.25;

/** Log-probabilities of `candidates` as the next token after `tokens`, on the reference path. */
export type NextTokenScorer = (tokens: Int32Array, candidates: Int32Array) => Promise<ArrayLike<number>>;

/** How two greedy replies compared: identical, or left each other at a near-tie (index into the reply, gap). */
export type GreedyAgreement = { kind: 'identical' } | { kind: 'nearTie'; at: number; gap: number };

/**
 * Asserts that `received` equals `reference` under the near-tie rule and says how.
 * `endOfReply`, when given, stands for the token after the last one of a reply that stopped earlier than the other
 * (its end-of-generation token), so that "one stopped, the other went on" is scored like any other divergence;
 * without it such a difference in length fails. `tie` is the gap allowed (default NEAR_TIE).
 */
export async function expectSameGreedy(
  received: Int32Array,
  reference: Int32Array,
  prompt: Int32Array,
  score: NextTokenScorer,
  options: { endOfReply?: number; label?: string; tie?: number } = {},
): Promise<GreedyAgreement> {
  const label = options.label === undefined ? '' : `${options.label}: `;
  const n = Math.min(received.length, reference.length);
  let k = 0;
  while (k < n && received[k] === reference[k]) k++;
  if (k === received.length && k === reference.length) return { kind: 'identical' };
  const tokenAt = (reply: Int32Array): number | undefined => reply[k] ?? options.endOfReply;
  const expected = tokenAt(reference);
  const got = tokenAt(received);
  expect(expected !== undefined && got !== undefined, `${label}the replies differ in length only`).toBe(true);
  const whole = new Int32Array(prompt.length + k);
  whole.set(prompt);
  whole.set(reference.subarray(0, k), prompt.length);
  const scores = await score(whole, Int32Array.from([expected!, got!]));
  const gap = Math.abs(scores[0]! - scores[1]!);
  expect(gap, `${label}token ${k}: ${expected} vs ${got} is not a near-tie`).toBeLessThan(options.tie ?? NEAR_TIE);
  return { kind: 'nearTie', at: k, gap };
}
