import { LlamaDialogError } from '../../errors.js';
import type { InferencePort } from '../inference-port.js';

/** Most options a letter-labelled question may have (A–Z). */
export const MAX_LETTER_OPTIONS = 26;

export function letterLabels(count: number): string[] {
  return Array.from({ length: count }, (_, index) => String.fromCharCode(65 + index));
}

/** The option list as the model reads it: `A. first\nB. second`. */
export function formatOptions(descriptions: readonly string[]): string {
  return letterLabels(descriptions.length)
    .map((label, index) => `${label}. ${descriptions[index]}`)
    .join('\n');
}

/**
 * The token each label starts with, as the model would write it right after the assistant header.
 * @throws LlamaDialogError InferenceFailed when two labels share a token (the vocabulary cannot tell them apart).
 */
export function labelTokens(tokenizer: InferencePort['tokenizer'], labels: readonly string[]): Int32Array {
  const tokens = labels.map((label) => tokenizer.tokenize(label, { addSpecial: false, parseSpecial: false })[0] ?? -1);
  if (new Set(tokens).size !== tokens.length || tokens.includes(-1)) {
    throw new LlamaDialogError('InferenceFailed', 'the model\'s vocabulary does not give each option letter its own token');
  }
  return Int32Array.from(tokens);
}

/** Probabilities over the candidates only (softmax of their log-probabilities). */
export function normalize(logProbabilities: Float64Array): number[] {
  const max = Math.max(...logProbabilities);
  const weights = [...logProbabilities].map((value) => Math.exp(value - max));
  const total = weights.reduce((sum, value) => sum + value, 0);
  return weights.map((value) => value / total);
}

export interface LetterDecision {
  /** Index of the winning option, or -1 when no option clears the threshold and margin. */
  winner: number;
  probabilities: number[];
  best: number;
  runnerUp: number;
}

/** The best option wins when its probability ≥ threshold and it leads the runner-up by ≥ margin. */
export function decide(probabilities: number[], threshold: number, margin: number): LetterDecision {
  const order = probabilities.map((p, index) => [p, index] as const).sort((a, b) => b[0] - a[0]);
  const best = order[0]?.[0] ?? 0;
  const runnerUp = order[1]?.[0] ?? 0;
  const winner = best >= threshold && best - runnerUp >= margin ? (order[0]?.[1] ?? -1) : -1;
  return { winner, probabilities, best, runnerUp };
}
