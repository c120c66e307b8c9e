import type { TurnMetrics } from '../../../src/bench/bench-result.js';

export interface SingleNodeTurn {
  turn: number;
  promptTokens: number;
  evaluatedTokens: number;
  wallMs: number;
  firstTokenMs: number;
  /** Time inside llama.cpp; null for a strategy that cannot tell. */
  engineMs: number | null;
  /** Default 'reply'. */
  node?: string;
  /** Default ''. */
  reply?: string;
}

/**
 * The figures of one turn made by one Generate call of 32 tokens, with no trim or summary: the turn and its only
 * node agree on every count, and whatever the prompt did not evaluate was reused.
 */
export function singleNodeTurn(turn: SingleNodeTurn): TurnMetrics {
  const { promptTokens, evaluatedTokens, wallMs, firstTokenMs, engineMs } = turn;
  const reusedTokens = promptTokens - evaluatedTokens;
  return {
    turn: turn.turn,
    wallMs,
    firstTokenMs,
    answerMs: wallMs,
    engineMs,
    promptTokens,
    reusedTokens,
    evaluatedTokens,
    generatedTokens: 32,
    trims: 0,
    summaryWrites: 0,
    idealEvaluatedTokens: null,
    nodes: [
      {
        node: turn.node ?? 'reply',
        nodeType: 'Generate',
        promptTokens,
        reusedTokens,
        evaluatedTokens,
        generatedTokens: 32,
        trimmedTurns: 0,
        summaryWritten: false,
        firstTokenMs,
        totalMs: wallMs,
        engineMs,
        rereadFrom: null,
        cacheMissCause: null,
      },
    ],
    reply: turn.reply ?? '',
  };
}
