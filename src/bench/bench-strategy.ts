import type { StrategyName, TurnMetrics } from './bench-result.js';

/**
 * One way of running the workload's conversation (ours or a baseline). The runner calls `prepare` (untimed:
 * model load, context creation), then `runTurn` once per player line in order, then `dispose`.
 */
export interface BenchStrategy {
  readonly name: StrategyName;
  /** One line saying what the strategy does. */
  readonly description: string;
  /**
   * True when the strategy knows where each prompt's history starts (`rereadFrom`), so that the ideal
   * evaluated-token figure can be computed for it.
   */
  readonly promptLayoutKnown: boolean;
  /** Caveats gathered while running (how a figure was derived). */
  readonly notes: string[];
  prepare(): Promise<void>;
  /**
   * Sends one player line and waits for the whole turn.
   * @param turn 1-based turn number.
   * @returns the turn's figures; `idealEvaluatedTokens` is filled later by the runner.
   */
  runTurn(line: string, turn: number): Promise<TurnMetrics>;
  dispose(): Promise<void>;
}
