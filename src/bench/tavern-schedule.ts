import { LlamaDialogError } from '../errors.js';
import { seededRandom } from '../util/seeded-random.js';

/** One player line of the tavern scene: who it is for and when the player wants to say it. */
export interface ScheduledLine {
  /** Position in the whole schedule (0-based, in order of `atMs`). */
  index: number;
  /** Agent the line is addressed to (0-based). */
  agent: number;
  /** Which of that agent's lines this is (0-based). */
  lineOfAgent: number;
  /**
   * When the player wants to speak, in ms after the scene starts. The line really arrives at the later of this and
   * the end of the agent's previous turn: a player waits for the answer before speaking again.
   */
  atMs: number;
}

/**
 * When a line is said. `poisson`: at its scheduled time, or as soon as the agent's previous turn ends when that is
 * later (the player waits for the answer). `lockstep`: in rounds — every agent's next line at once, as soon as every
 * agent has answered its previous one. Lockstep is the best packing a batching scheduler can get: every step holds
 * every agent, and all the round's prompts go into one decode. It measures the headroom of the hardware, not a game.
 */
export type TavernArrivals = 'poisson' | 'lockstep';
export const TAVERN_ARRIVALS: readonly TavernArrivals[] = ['poisson', 'lockstep'];

export interface TavernScheduleOptions {
  agents: number;
  linesPerAgent: number;
  /** Mean gap between two consecutive lines of the whole tavern (ms): the Poisson process's 1 / rate. */
  meanGapMs: number;
  seed: number;
}

/**
 * A seeded Poisson arrival schedule: gaps between consecutive lines are exponential with mean `meanGapMs`, and the
 * agents are dealt their lines in a seeded random order so each gets exactly `linesPerAgent`. The same options give
 * the same schedule on every machine, so every strategy replays the same evening.
 * @throws LlamaDialogError InvalidArgument for non-positive counts or gap, or a non-integer seed.
 */
export function tavernSchedule(options: TavernScheduleOptions): ScheduledLine[] {
  const { agents, linesPerAgent, meanGapMs, seed } = options;
  if (!Number.isInteger(agents) || agents < 1) throw new LlamaDialogError('InvalidArgument', `agents must be a positive integer, got ${agents}`);
  if (!Number.isInteger(linesPerAgent) || linesPerAgent < 1) {
    throw new LlamaDialogError('InvalidArgument', `lines per agent must be a positive integer, got ${linesPerAgent}`);
  }
  if (!(meanGapMs > 0) || !Number.isFinite(meanGapMs)) throw new LlamaDialogError('InvalidArgument', `mean gap must be a positive number of ms, got ${meanGapMs}`);
  if (!Number.isInteger(seed)) throw new LlamaDialogError('InvalidArgument', `seed must be an integer, got ${seed}`);
  const random = seededRandom(seed);
  const owners: number[] = [];
  for (let agent = 0; agent < agents; agent++) for (let line = 0; line < linesPerAgent; line++) owners.push(agent);
  // Fisher–Yates with the seeded source: which agent each arrival is for.
  for (let i = owners.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [owners[i], owners[j]] = [owners[j] as number, owners[i] as number];
  }
  const linesSoFar = new Array<number>(agents).fill(0);
  let atMs = 0;
  return owners.map((agent, index) => {
    atMs += exponentialGap(random(), meanGapMs);
    const lineOfAgent = linesSoFar[agent] ?? 0;
    linesSoFar[agent] = lineOfAgent + 1;
    return { index, agent, lineOfAgent, atMs };
  });
}

/** Inverse-CDF draw of an exponential variable; `unit` in [0, 1) never gives an infinite gap. */
function exponentialGap(unit: number, mean: number): number {
  return -mean * Math.log(1 - unit);
}
