import { describe, expect, it } from 'vitest';
import { isLlamaDialogError } from '../../../src/errors.js';
import { tavernSchedule } from '../../../src/bench/tavern-schedule.js';
import { mean } from '../../../src/bench/statistics.js';

describe('tavernSchedule (seeded Poisson arrivals)', () => {
  it('is the same for the same seed and differs for another seed', () => {
    const options = { agents: 8, linesPerAgent: 6, meanGapMs: 500, seed: 7 };
    expect(tavernSchedule(options)).toEqual(tavernSchedule(options));
    const other = tavernSchedule({ ...options, seed: 8 });
    expect(other.map((line) => line.atMs)).not.toEqual(tavernSchedule(options).map((line) => line.atMs));
    expect(other.map((line) => line.agent)).not.toEqual(tavernSchedule(options).map((line) => line.agent));
  });

  it('has agents × lines entries, exactly the requested lines per agent, numbered in time order', () => {
    const schedule = tavernSchedule({ agents: 5, linesPerAgent: 4, meanGapMs: 100, seed: 1 });
    expect(schedule).toHaveLength(20);
    expect(schedule.map((line) => line.index)).toEqual([...Array(20).keys()]);
    for (let agent = 0; agent < 5; agent++) {
      const own = schedule.filter((line) => line.agent === agent);
      expect(own.map((line) => line.lineOfAgent)).toEqual([0, 1, 2, 3]);
    }
    for (let k = 1; k < schedule.length; k++) expect(schedule[k]!.atMs).toBeGreaterThan(schedule[k - 1]!.atMs);
    expect(schedule[0]!.atMs).toBeGreaterThan(0);
  });

  it('has exponential gaps: mean within 5 % of the requested one and spread like an exponential over 10,000 samples', () => {
    const schedule = tavernSchedule({ agents: 100, linesPerAgent: 100, meanGapMs: 250, seed: 42 });
    const gaps = schedule.map((line, k) => line.atMs - (k === 0 ? 0 : schedule[k - 1]!.atMs));
    expect(Math.abs(mean(gaps) - 250) / 250).toBeLessThan(0.05);
    // An exponential has P(gap > mean) = e^-1 ≈ 0.368 and a standard deviation equal to its mean.
    const aboveMean = gaps.filter((gap) => gap > 250).length / gaps.length;
    expect(aboveMean).toBeGreaterThan(0.34);
    expect(aboveMean).toBeLessThan(0.40);
    const average = mean(gaps);
    const sd = Math.sqrt(mean(gaps.map((gap) => (gap - average) ** 2)));
    expect(Math.abs(sd - 250) / 250).toBeLessThan(0.08);
  });

  it('refuses bad counts, gaps and seeds with InvalidArgument', () => {
    for (const bad of [
      { agents: 0, linesPerAgent: 1, meanGapMs: 1, seed: 1 },
      { agents: 1, linesPerAgent: 1.5, meanGapMs: 1, seed: 1 },
      { agents: 1, linesPerAgent: 1, meanGapMs: 0, seed: 1 },
      { agents: 1, linesPerAgent: 1, meanGapMs: Number.POSITIVE_INFINITY, seed: 1 },
      { agents: 1, linesPerAgent: 1, meanGapMs: 1, seed: 0.5 },
    ]) {
      let caught: unknown;
      try {
        tavernSchedule(bad);
      } catch (error) {
        caught = error;
      }
      expect(isLlamaDialogError(caught, 'InvalidArgument')).toBe(true);
    }
  });
});
