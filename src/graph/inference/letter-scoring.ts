import { LlamaDialogError } from '../../errors.js';
import type { PromptAssembler } from '../../prompt/prompt-assembler.js';
import type { InferencePort } from '../inference-port.js';
import type { NodeRunContext } from '../node-run-context.js';
import { assembledPromptInput } from './inference-record.js';
import { classifierMessages, type ClassifierPrompt } from './classifier-prompt.js';

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

/**
 * Scores the next-token log-probabilities of `candidates` after the classifier's prompt on the node's context, and
 * records the prompt and cache figures in the node's diagnostics (appended when a node asks several questions).
 * The prompt obeys the budget like every other node's (SPEC §3.3–3.4): the budget is the context less the one token
 * scored, and the oldest earlier turns are dropped, whole, until the prompt fits it. Only instructions plus the current
 * line that do not fit at all are a ContextOverflow.
 */
export async function scoreLetters(
  run: NodeRunContext,
  inference: InferencePort,
  assembler: PromptAssembler,
  prompt: ClassifierPrompt,
  candidates: Int32Array,
): Promise<Float64Array> {
  const budget = inference.contextSize - 1;
  let firstKept = 0;
  let messages = classifierMessages(prompt, firstKept);
  let assembled = assembler.assemble(messages);
  const fullTokens = assembled.tokens.length;
  while (assembled.tokens.length > budget && firstKept < prompt.history.length) {
    firstKept += 1;
    messages = classifierMessages(prompt, firstKept);
    assembled = assembler.assemble(messages);
  }
  if (assembled.tokens.length > budget) {
    throw new LlamaDialogError(
      'ContextOverflow',
      `node "${run.node.name}": the classifier's instructions and the current line need ${assembled.tokens.length} tokens; ` +
        `the context holds ${inference.contextSize} (one is kept for the scored token)`,
    );
  }
  if (firstKept > 0) {
    run.diagnostics.warn(
      `node "${run.node.name}": ${firstKept} of ${prompt.history.length} history turns dropped: the prompt took ${fullTokens} tokens, over the budget of ${budget}`,
    );
  }
  const kept = prompt.history.slice(firstKept);
  const { scores, reused, evaluated } = await inference.score(assembled.tokens, candidates);
  const input = assembledPromptInput(messages, assembled, {
    budget,
    contextSize: inference.contextSize,
    template: assembler.renderer.description,
    ...(kept.length > 0 ? { history: { firstTurnInPrompt: kept[0]!.turn, historyTurnsInPrompt: kept.length } } : {}),
  });
  input.turnsTrimmed = firstKept;
  run.diagnostics.recordInference({ input, reuse: { reused, evaluated } });
  return scores;
}
