/** Inputs of one trimming decision, all in exact tokens. */
export interface TrimInput {
  /** Tokens that are never dropped: system message, current turn, scaffolding and generation prompt. */
  fixedTokens: number;
  /** Tokens of each history turn in the prompt, oldest first. */
  turnTokens: readonly number[];
  /** Prompt budget (`contextSize − maxTokens`). */
  budget: number;
  /** Level a trim ends at (`floor(budget × 0.75)` by default). */
  trimTarget: number;
}

export interface TrimDecision {
  /** How many of the oldest turns to drop (0 when the prompt fits the budget). */
  dropCount: number;
  /** Prompt tokens after dropping them. */
  promptTokens: number;
  /** True when the prompt was over the budget and turns were dropped. */
  trimmed: boolean;
  /** True when even the fixed part exceeds the budget: every history turn is dropped. */
  fixedPartOverBudget: boolean;
}

/**
 * Whole-turn trimming with hysteresis (SPEC §3.4): nothing happens while the prompt is at or below `budget`; once it
 * is above, the oldest whole turns are dropped until the prompt is at or below `trimTarget` (or no history is left).
 * Pure arithmetic: the caller re-counts the exact prompt afterwards.
 */
export function trimToBudget(input: TrimInput): TrimDecision {
  const { fixedTokens, turnTokens, budget, trimTarget } = input;
  let total = fixedTokens;
  for (const tokens of turnTokens) total += tokens;
  if (total <= budget) return { dropCount: 0, promptTokens: total, trimmed: false, fixedPartOverBudget: false };
  let dropCount = 0;
  while (dropCount < turnTokens.length && total > trimTarget) {
    total -= turnTokens[dropCount]!;
    dropCount++;
  }
  return { dropCount, promptTokens: total, trimmed: dropCount > 0, fixedPartOverBudget: fixedTokens > budget };
}

/** One assembly of the prompt from a first kept history turn on, with what trimming needs to know of it. */
export interface TrimCandidate {
  /** Exact prompt tokens of this assembly. */
  promptTokens: number;
  /** Tokens never dropped (system message, current turn, scaffolding). */
  fixedTokens: number;
  /** Tokens of each history turn in it, oldest first. */
  turnTokens: readonly number[];
}

/**
 * Trims a prompt whose history runs from turn `start` to before `currentTurn`: {@link trimToBudget} on the exact
 * counts of the untrimmed assembly, then settling on exact counts, since the scaffolding of the new first turn may
 * differ by a token or two from the estimate. `assembleFrom(firstKept)` assembles the prompt from that turn on.
 * @returns the first kept turn and its assembly (the untrimmed one when the prompt fits).
 */
export function trimHistoryToBudget<T extends TrimCandidate>(options: {
  start: number;
  currentTurn: number;
  budget: number;
  trimTarget: number;
  assembleFrom(firstKept: number): T;
}): { firstKept: number; assembly: T; promptTokensBeforeTrim: number } {
  const { start, currentTurn, budget, trimTarget, assembleFrom } = options;
  let firstKept = start;
  let assembly = assembleFrom(firstKept);
  const promptTokensBeforeTrim = assembly.promptTokens;
  if (assembly.promptTokens <= budget) return { firstKept, assembly, promptTokensBeforeTrim };
  const decision = trimToBudget({ fixedTokens: assembly.fixedTokens, turnTokens: assembly.turnTokens, budget, trimTarget });
  if (decision.dropCount > 0) {
    firstKept = start + decision.dropCount;
    assembly = assembleFrom(firstKept);
  }
  while (firstKept > start && assembly.promptTokens > trimTarget && firstKept < currentTurn) {
    firstKept++;
    assembly = assembleFrom(firstKept);
  }
  return { firstKept, assembly, promptTokensBeforeTrim };
}
