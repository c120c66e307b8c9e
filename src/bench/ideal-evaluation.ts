/**
 * The "ideal" number of prompt tokens a node must evaluate: every token of the conversation read once, plus
 * the re-reads a trim (or a new summary) forces because it changes the start of the prompt. A perfect
 * prefix-matching cache reaches it; `evaluated / ideal` shows what an engine wastes beyond that.
 *
 * It is computed from prompt sizes alone, independent of what the engine reports it reused, so an engine
 * that silently loses its cache (or re-tokenizes differently) shows up as a ratio above 1.
 */

/** One LLM call of one node, in turn order. */
export interface PromptCall {
  /** Tokens of the prompt the node decoded for this call. */
  promptTokens: number;
  /** Tokens a cache holds after the call when nothing is thrown away: the prompt plus the reply tokens kept. */
  tokensAfter: number;
  /**
   * Where the prompt stops extending the previous call's tokens because its history start moved (a trim, a
   * new summary, a Summarize node's fresh transcript): every token from this position on is read again.
   * `null` when the prompt simply extends the previous call's tokens.
   */
  rereadFrom: number | null;
}

/**
 * Ideal evaluated tokens of each call of one node (same order as `calls`).
 * The first call reads its whole prompt; a later call reads what is new since the previous call's
 * `tokensAfter`, or everything from `rereadFrom` on; at least 1 token, because logits for the next token
 * come only from decoding the last prompt token.
 */
export function idealEvaluatedPerCall(calls: readonly PromptCall[]): number[] {
  const ideal: number[] = [];
  let previous: PromptCall | undefined;
  for (const call of calls) {
    let tokens: number;
    if (previous === undefined) tokens = call.promptTokens;
    else if (call.rereadFrom !== null) tokens = call.promptTokens - Math.min(call.rereadFrom, previous.tokensAfter);
    else tokens = call.promptTokens - previous.tokensAfter;
    ideal.push(Math.max(1, Math.min(call.promptTokens, tokens)));
    previous = call;
  }
  return ideal;
}
