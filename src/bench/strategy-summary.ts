import type {
  BaselineRatio,
  GoalCheck,
  LlamaBenchFloor,
  StrategyResult,
  StrategySummary,
  TurnMetrics,
} from './bench-result.js';
import { idealEvaluatedPerCall, type PromptCall } from './ideal-evaluation.js';
import { median, percentile, ratio, sum } from './statistics.js';

/**
 * Fills `idealEvaluatedTokens` of every turn from its per-node calls; each node's calls form their own line
 * (each node has its own KV cache). Strategies that cannot tell where their prompts' history starts pass
 * `layoutKnown: false` and get null.
 */
export function withIdealEvaluation(turns: readonly TurnMetrics[], layoutKnown = true): TurnMetrics[] {
  if (!layoutKnown) return turns.map((turn) => ({ ...turn, idealEvaluatedTokens: null }));
  const callsByNode = new Map<string, { turnIndex: number; call: PromptCall }[]>();
  turns.forEach((turn, turnIndex) => {
    for (const node of turn.nodes) {
      const calls = callsByNode.get(node.node) ?? [];
      calls.push({
        turnIndex,
        call: {
          promptTokens: node.promptTokens,
          tokensAfter: node.promptTokens + node.generatedTokens,
          rereadFrom: node.rereadFrom,
        },
      });
      callsByNode.set(node.node, calls);
    }
  });
  const idealByTurn = turns.map(() => 0);
  for (const calls of callsByNode.values()) {
    const ideal = idealEvaluatedPerCall(calls.map((entry) => entry.call));
    calls.forEach((entry, index) => {
      idealByTurn[entry.turnIndex] = (idealByTurn[entry.turnIndex] ?? 0) + (ideal[index] ?? 0);
    });
  }
  return turns.map((turn, index) => ({ ...turn, idealEvaluatedTokens: idealByTurn[index] ?? 0 }));
}

/** Totals, medians and p95s over the turns of one strategy. */
export function summarizeTurns(turns: readonly TurnMetrics[]): StrategySummary {
  const wall = turns.map((turn) => turn.wallMs);
  const firstToken = turns.map((turn) => turn.firstTokenMs).filter((ms): ms is number => ms !== null);
  const evaluated = turns.map((turn) => turn.evaluatedTokens);
  const ideals = turns.map((turn) => turn.idealEvaluatedTokens);
  const idealKnown = ideals.every((value): value is number => value !== null) && ideals.length > 0;
  const totalIdeal = idealKnown ? sum(ideals as number[]) : null;
  const totalEvaluated = sum(evaluated);
  const normal = turns.filter(isNormalTurn);
  return {
    turns: turns.length,
    totalWallMs: sum(wall),
    medianTurnMs: median(wall),
    p95TurnMs: percentile(wall, 95),
    medianFirstTokenMs: median(firstToken),
    p95FirstTokenMs: percentile(firstToken, 95),
    medianAnswerMs: median(turns.map((turn) => turn.answerMs)),
    p95AnswerMs: percentile(turns.map((turn) => turn.answerMs), 95),
    totalPromptTokens: sum(turns.map((turn) => turn.promptTokens)),
    totalReusedTokens: sum(turns.map((turn) => turn.reusedTokens)),
    totalEvaluatedTokens: totalEvaluated,
    totalGeneratedTokens: sum(turns.map((turn) => turn.generatedTokens)),
    medianEvaluatedTokens: median(evaluated),
    p95EvaluatedTokens: percentile(evaluated, 95),
    totalTrims: sum(turns.map((turn) => turn.trims)),
    totalSummaryWrites: sum(turns.map((turn) => turn.summaryWrites)),
    totalIdealEvaluatedTokens: totalIdeal,
    evaluatedOverIdeal: totalIdeal === null ? null : ratio(totalEvaluated, totalIdeal),
    normalTurns: normal.length,
    medianNormalTurnMs: median(normal.map((turn) => turn.wallMs)),
    medianNormalTurnOverheadMs:
      normal.length > 0 && normal.every((turn) => turn.engineMs !== null)
        ? median(normal.map((turn) => turn.wallMs - (turn.engineMs ?? 0)))
        : null,
    ...draftTotals(turns),
  };
}

/**
 * A turn that neither trimmed nor wrote a summary and is not the first: only the new line is read and a
 * reply generated — the case llama-bench's floor describes.
 */
export function isNormalTurn(turn: TurnMetrics): boolean {
  return turn.turn > 1 && turn.trims === 0 && turn.summaryWrites === 0 && turn.reusedTokens > 0;
}

/** ours ÷ each baseline. */
export function baselineRatios(ours: StrategyResult, baselines: readonly StrategyResult[]): BaselineRatio[] {
  return baselines.map((baseline) => ({
    baseline: baseline.strategy,
    totalWall: ratio(ours.summary.totalWallMs, baseline.summary.totalWallMs),
    evaluatedTokens: ratio(ours.summary.totalEvaluatedTokens, baseline.summary.totalEvaluatedTokens),
    medianFirstToken: ratio(ours.summary.medianFirstTokenMs, baseline.summary.medianFirstTokenMs),
    medianTurn: ratio(ours.summary.medianTurnMs, baseline.summary.medianTurnMs),
  }));
}

/**
 * The benchmark's targets for this run. The evaluated-tokens limit against node-llama-cpp is 0.5× from 200 turns
 * on (long conversations, where re-reads dominate) and 0.7× below.
 */
export function checkGoals(
  ours: StrategyResult,
  ratios: readonly BaselineRatio[],
  floor: LlamaBenchFloor | null,
): GoalCheck[] {
  const versusPeer = ratios.find((entry) => entry.baseline === 'node-llama-cpp');
  const evaluatedLimit = ours.summary.turns >= 200 ? 0.5 : 0.7;
  const goal = (name: string, value: number | null | undefined, limit: number): GoalCheck => {
    const known = value !== null && value !== undefined && Number.isFinite(value);
    return { goal: name, value: known ? value : null, limit, met: known ? value <= limit : null };
  };
  return [
    goal('total wall time vs node-llama-cpp', versusPeer?.totalWall, 0.6),
    goal('evaluated tokens vs node-llama-cpp', versusPeer?.evaluatedTokens, evaluatedLimit),
    goal('normal turn vs llama-bench floor', floor?.ratio, 1.15),
    goal('evaluated tokens vs ideal', ours.summary.evaluatedOverIdeal, 1.3),
  ];
}

/** Drafting totals over every node call that reported them; nothing when none did (a baseline, a fake engine). */
function draftTotals(turns: readonly TurnMetrics[]): { totalDraftedTokens?: number; totalAcceptedDraftTokens?: number } {
  const calls = turns.flatMap((turn) => turn.nodes).filter((node) => node.draftedTokens !== undefined);
  if (calls.length === 0) return {};
  return {
    totalDraftedTokens: sum(calls.map((node) => node.draftedTokens ?? 0)),
    totalAcceptedDraftTokens: sum(calls.map((node) => node.acceptedDraftTokens ?? 0)),
  };
}
