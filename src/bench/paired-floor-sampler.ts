import type { FloorPair, LlamaBenchFloor, TurnMetrics } from './bench-result.js';
import { runLlamaBench } from './llama-bench-floor.js';
import { median, theilSenLine } from './statistics.js';
import { isNormalTurn } from './strategy-summary.js';

export interface PairedFloorOptions {
  /** llama-bench binary. */
  binary: string;
  modelPath: string;
  threads: number;
  /** Turns in the workload, to spread the samples over the whole run. */
  turns: number;
  /** How many of ours' normal turns get a llama-bench twin (default 8). */
  samples?: number;
}

/** What the sampler ends with: a floor, or why there is none. */
export interface FloorOutcome {
  floor: LlamaBenchFloor | null;
  /** Why there is no floor; null when there is one. */
  floorNote: string | null;
}

export const DEFAULT_FLOOR_SAMPLES = 8;

/**
 * The llama-bench floor of a normal turn, measured in pairs: right after some of ours' normal turns, spread over
 * the run, llama-bench runs the very same shape once (`-pg new,generated -d reused -r 1`: the turn's new tokens
 * on a cache as deep as what it reused, then its reply length). A shared machine's speed drifts over minutes;
 * a twin measured seconds after its turn sees the same machine, so the ratio of each pair is about the runtime,
 * not about the hour. Each sample costs one llama-bench start plus the prefill of the depth (a few seconds on a
 * CPU), which is why only a handful of turns get one.
 */
export class PairedFloorSampler {
  private readonly pairs: FloorPair[] = [];
  private readonly samples: number;
  private readonly interval: number;
  private nextTurn: number;
  private failure: string | null = null;

  constructor(private readonly options: PairedFloorOptions) {
    this.samples = options.samples ?? DEFAULT_FLOOR_SAMPLES;
    this.interval = Math.max(1, Math.floor(options.turns / Math.max(1, this.samples)));
    // The first turn is never normal; start half an interval in so that the samples sit mid-interval.
    this.nextTurn = Math.max(2, Math.ceil(this.interval / 2));
  }

  /** Call after each of ours' turns; measures its twin when the turn is due and normal. */
  async afterTurn(turn: TurnMetrics): Promise<void> {
    if (this.failure !== null || this.pairs.length >= this.samples) return;
    if (turn.turn < this.nextTurn || !isNormalTurn(turn)) return;
    const shape = {
      depth: turn.reusedTokens,
      promptTokens: Math.max(1, turn.evaluatedTokens),
      generatedTokens: Math.max(1, turn.generatedTokens),
    };
    try {
      const timing = await runLlamaBench({
        binary: this.options.binary,
        modelPath: this.options.modelPath,
        threads: this.options.threads,
        repetitions: 1,
        ...shape,
      });
      this.pairs.push({ turn: turn.turn, ...shape, oursMs: turn.wallMs, floorMs: timing.meanMs });
      this.nextTurn = turn.turn + this.interval;
    } catch (error) {
      this.failure = error instanceof Error ? error.message : String(error);
    }
  }

  /**
   * The floor from the pairs measured so far, held against every normal turn of `allTurns` (ours' whole run).
   * One turn and one llama-bench repetition each jitter by ±20 % on a shared machine, so the median of 8 pair
   * ratios still wanders; a robust line through the 8 llama-bench samples (spread over the run's depths and
   * minutes) compared with all of ours' normal turns at their own depth is the steadier figure, and the goal's.
   */
  outcome(allTurns: readonly TurnMetrics[]): FloorOutcome {
    if (this.failure !== null) return { floor: null, floorNote: `no llama-bench floor: ${this.failure}` };
    if (this.pairs.length === 0) {
      return { floor: null, floorNote: 'no llama-bench floor: ours had no normal (untrimmed, unsummarized) turn' };
    }
    const pairedRatios = this.pairs.map((pair) => pair.oursMs / pair.floorMs);
    const line = theilSenLine(this.pairs.map((pair) => ({ x: pair.depth, y: pair.floorMs })));
    const normal = allTurns.filter(isNormalTurn);
    const turnRatios = normal.map((turn) => turn.wallMs / (line.intercept + line.slope * turn.reusedTokens));
    return {
      floor: {
        binary: this.options.binary,
        pairs: [...this.pairs],
        depth: Math.round(median(this.pairs.map((pair) => pair.depth))),
        promptTokens: Math.round(median(this.pairs.map((pair) => pair.promptTokens))),
        generatedTokens: Math.round(median(this.pairs.map((pair) => pair.generatedTokens))),
        floorMs: median(this.pairs.map((pair) => pair.floorMs)),
        floorLine: { interceptMs: line.intercept, msPerDepthToken: line.slope },
        normalTurns: normal.length,
        oursMedianNormalTurnMs: median(normal.map((turn) => turn.wallMs)),
        ratio: median(turnRatios),
        pairedRatio: median(pairedRatios),
        lowestPairedRatio: Math.min(...pairedRatios),
        highestPairedRatio: Math.max(...pairedRatios),
      },
      floorNote: null,
    };
  }
}
