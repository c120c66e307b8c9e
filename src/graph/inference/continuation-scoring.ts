import { LlamaDialogError } from '../../errors.js';
import type { PromptAssembler } from '../../prompt/prompt-assembler.js';
import type { InferencePort } from '../inference-port.js';
import type { NodeRunContext } from '../node-run-context.js';
import { assembledPromptInput } from './inference-record.js';
import { classifierMessages, type ClassifierPrompt } from './classifier-prompt.js';

/**
 * Scores how likely the model is to write each of `continuations` right after the classifier's prompt: the sum of
 * the log-probabilities of a continuation's tokens, each given the prompt and the tokens before it. One-token
 * continuations (letter labels) cost one scoring call; longer ones (label words) walk a trie of the continuations,
 * one call per distinct prefix, each of which extends the previous call's cache by a token or two.
 *
 * The prompt obeys the budget like every other node's (SPEC §3.3–3.4): the budget is the context less the longest
 * continuation, and the oldest earlier turns are dropped, whole, until the prompt fits it. Only instructions plus
 * the current line that do not fit at all are a ContextOverflow. The prompt and cache figures of every call go to
 * the node's diagnostics (appended when a node asks several questions).
 */
export async function scoreContinuations(
  run: NodeRunContext,
  inference: InferencePort,
  assembler: PromptAssembler,
  prompt: ClassifierPrompt,
  continuations: readonly Int32Array[],
): Promise<Float64Array> {
  const longest = Math.max(1, ...continuations.map((tokens) => tokens.length));
  const budget = inference.contextSize - longest;
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
        `the context holds ${inference.contextSize} (${longest} kept for the scored answer)`,
    );
  }
  if (firstKept > 0) {
    run.diagnostics.warn(
      `node "${run.node.name}": ${firstKept} of ${prompt.history.length} history turns dropped: the prompt took ${fullTokens} tokens, over the budget of ${budget}`,
    );
  }
  const kept = prompt.history.slice(firstKept);
  const input = assembledPromptInput(messages, assembled, {
    budget,
    contextSize: inference.contextSize,
    template: assembler.renderer.description,
    ...(kept.length > 0 ? { history: { firstTurnInPrompt: kept[0]!.turn, historyTurnsInPrompt: kept.length } } : {}),
  });
  input.turnsTrimmed = firstKept;

  const totals = new Float64Array(continuations.length);
  let reused = -1;
  let evaluated = 0;
  for (const step of scoringSteps(continuations)) {
    const scored = await inference.score(concat(assembled.tokens, step.prefix), Int32Array.from(step.next.keys()));
    // The prompt's own reuse is the first call's; later calls only add the label tokens they extend by.
    if (reused < 0) reused = scored.reused;
    evaluated += scored.evaluated;
    [...step.next.values()].forEach((owners, index) => {
      for (const owner of owners) totals[owner]! += scored.scores[index] ?? Number.NEGATIVE_INFINITY;
    });
  }
  run.diagnostics.recordInference({ input, reuse: { reused: Math.max(0, reused), evaluated } });
  return totals;
}

/** One scoring call: the continuation tokens already written, and each next token with the continuations that take it. */
interface ScoringStep {
  prefix: Int32Array;
  next: Map<number, number[]>;
}

/**
 * The distinct prefixes of the continuations in depth-first order, so that consecutive calls share as much of the
 * cache as possible: a trie walk where each node is one call scoring all its children at once.
 */
export function scoringSteps(continuations: readonly Int32Array[]): ScoringStep[] {
  const steps: ScoringStep[] = [];
  const visit = (prefix: Int32Array, owners: readonly number[]): void => {
    const next = new Map<number, number[]>();
    for (const owner of owners) {
      const token = continuations[owner]![prefix.length];
      if (token === undefined) continue;
      next.set(token, [...(next.get(token) ?? []), owner]);
    }
    if (next.size === 0) return;
    steps.push({ prefix, next });
    for (const [token, children] of next) visit(concat(prefix, Int32Array.of(token)), children);
  };
  visit(new Int32Array(0), continuations.map((_, index) => index));
  return steps;
}

function concat(a: Int32Array, b: Int32Array): Int32Array {
  if (b.length === 0) return a;
  const joined = new Int32Array(a.length + b.length);
  joined.set(a);
  joined.set(b, a.length);
  return joined;
}
