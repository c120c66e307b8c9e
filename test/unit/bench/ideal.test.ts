import { describe, expect, it } from 'vitest';
import type { NodeCallMetrics, TurnMetrics } from '../../../src/bench/bench-result.js';
import { idealEvaluatedPerCall } from '../../../src/bench/ideal-evaluation.js';
import { isNormalTurn, summarizeTurns, withIdealEvaluation } from '../../../src/bench/strategy-summary.js';

describe('idealEvaluatedPerCall', () => {
  it('reads the whole first prompt, then only what is new since the previous prompt and reply', () => {
    expect(
      idealEvaluatedPerCall([
        { promptTokens: 250, tokensAfter: 282, rereadFrom: null },
        { promptTokens: 320, tokensAfter: 352, rereadFrom: null },
        { promptTokens: 390, tokensAfter: 400, rereadFrom: null },
      ]),
    ).toEqual([250, 38, 38]);
  });

  it('adds the re-read a trim forces: everything after the kept prefix', () => {
    const ideal = idealEvaluatedPerCall([
      { promptTokens: 1700, tokensAfter: 1732, rereadFrom: null },
      // Trim: history now starts right after a 240-token system message.
      { promptTokens: 1200, tokensAfter: 1232, rereadFrom: 240 },
    ]);
    expect(ideal).toEqual([1700, 960]);
  });

  it('never asks less than one token (logits need the last prompt token decoded)', () => {
    expect(
      idealEvaluatedPerCall([
        { promptTokens: 100, tokensAfter: 132, rereadFrom: null },
        { promptTokens: 120, tokensAfter: 120, rereadFrom: null },
      ]),
    ).toEqual([100, 1]);
  });

  it('cannot keep more than the previous call held, even when the re-read starts later', () => {
    expect(
      idealEvaluatedPerCall([
        { promptTokens: 50, tokensAfter: 50, rereadFrom: null },
        { promptTokens: 300, tokensAfter: 300, rereadFrom: 200 },
      ]),
    ).toEqual([50, 250]);
  });
});

function node(overrides: Partial<NodeCallMetrics>): NodeCallMetrics {
  return {
    node: 'reply',
    nodeType: 'Generate',
    promptTokens: 0,
    reusedTokens: 0,
    evaluatedTokens: 0,
    generatedTokens: 0,
    trimmedTurns: 0,
    summaryWritten: false,
    firstTokenMs: 10,
    totalMs: 100,
    engineMs: 90,
    rereadFrom: null,
    cacheMissCause: null,
    ...overrides,
  };
}

function turn(index: number, nodes: NodeCallMetrics[], wallMs = 100, engineMs: number | null = null): TurnMetrics {
  const total = (key: 'promptTokens' | 'reusedTokens' | 'evaluatedTokens' | 'generatedTokens' | 'trimmedTurns') =>
    nodes.reduce((acc, entry) => acc + entry[key], 0);
  return {
    turn: index,
    wallMs,
    firstTokenMs: 10,
    answerMs: wallMs,
    engineMs,
    promptTokens: total('promptTokens'),
    reusedTokens: total('reusedTokens'),
    evaluatedTokens: total('evaluatedTokens'),
    generatedTokens: total('generatedTokens'),
    trims: total('trimmedTurns') > 0 ? 1 : 0,
    summaryWrites: nodes.filter((entry) => entry.summaryWritten).length,
    idealEvaluatedTokens: null,
    nodes,
    reply: '',
  };
}

describe('withIdealEvaluation and summarizeTurns', () => {
  it('keeps each node on its own cache line when computing the ideal', () => {
    const turns = withIdealEvaluation([
      turn(1, [node({ promptTokens: 300, evaluatedTokens: 300, generatedTokens: 30 })]),
      turn(2, [
        node({ promptTokens: 400, reusedTokens: 330, evaluatedTokens: 70, generatedTokens: 30 }),
        node({ node: 'summarize', nodeType: 'Summarize', promptTokens: 500, evaluatedTokens: 500, generatedTokens: 60, summaryWritten: true }),
      ]),
      turn(3, [node({ promptTokens: 500, reusedTokens: 430, evaluatedTokens: 70, generatedTokens: 30 })]),
    ]);
    expect(turns.map((entry) => entry.idealEvaluatedTokens)).toEqual([300, 70 + 500, 70]);
    const summary = summarizeTurns(turns);
    expect(summary.totalIdealEvaluatedTokens).toBe(940);
    expect(summary.totalEvaluatedTokens).toBe(940);
    expect(summary.evaluatedOverIdeal).toBe(1);
    expect(summary.totalSummaryWrites).toBe(1);
    expect(summary.normalTurns).toBe(1);
  });

  it('shows an engine that loses its cache as a ratio above 1', () => {
    const turns = withIdealEvaluation([
      turn(1, [node({ promptTokens: 300, evaluatedTokens: 300, generatedTokens: 30 })]),
      turn(2, [node({ promptTokens: 400, evaluatedTokens: 400, generatedTokens: 30 })]),
    ]);
    expect(summarizeTurns(turns).evaluatedOverIdeal).toBeCloseTo(700 / 370, 10);
  });

  it('leaves the ideal unknown for strategies without a prompt layout', () => {
    const turns = withIdealEvaluation([turn(1, [node({ promptTokens: 300, evaluatedTokens: 300 })])], false);
    expect(turns[0]?.idealEvaluatedTokens).toBeNull();
    expect(summarizeTurns(turns).evaluatedOverIdeal).toBeNull();
  });

  it('summarizes wall time with totals, medians and p95', () => {
    const turns = [1, 2, 3, 4].map((index) =>
      turn(index, [node({ promptTokens: 10, reusedTokens: index > 1 ? 5 : 0, evaluatedTokens: 5 })], index * 100),
    );
    const summary = summarizeTurns(turns);
    expect(summary.totalWallMs).toBe(1000);
    expect(summary.medianTurnMs).toBe(250);
    expect(summary.p95TurnMs).toBeCloseTo(385, 10);
    expect(summary.medianNormalTurnMs).toBe(300);
    expect(summary.medianNormalTurnOverheadMs).toBeNull();
  });

  it('reports the median time of normal turns spent outside the engine', () => {
    const turns = [1, 2, 3, 4].map((index) =>
      turn(index, [node({ promptTokens: 10, reusedTokens: index > 1 ? 5 : 0, evaluatedTokens: 5 })], 100, 100 - index * 2),
    );
    // Turn 1 is not normal; turns 2..4 spent 4, 6 and 8 ms outside the engine.
    expect(summarizeTurns(turns).medianNormalTurnOverheadMs).toBe(6);
  });

  it('does not count first, trimming or summarizing turns as normal', () => {
    expect(isNormalTurn(turn(1, [node({ reusedTokens: 0 })]))).toBe(false);
    expect(isNormalTurn(turn(5, [node({ reusedTokens: 200, trimmedTurns: 3 })]))).toBe(false);
    expect(isNormalTurn(turn(5, [node({ reusedTokens: 200, summaryWritten: true })]))).toBe(false);
    expect(isNormalTurn(turn(5, [node({ reusedTokens: 200 })]))).toBe(true);
  });
});
