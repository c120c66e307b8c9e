import { describe, expect, it } from 'vitest';
import { mean, median, percentile, ratio, sum, theilSenLine } from '../../../src/bench/statistics.js';

describe('bench statistics', () => {
  it('sums and averages', () => {
    expect(sum([1, 2, 3.5])).toBe(6.5);
    expect(mean([2, 4, 9])).toBe(5);
    expect(sum([])).toBe(0);
    expect(mean([])).toBeNaN();
  });

  it('takes the median of odd and even lists without caring about order', () => {
    expect(median([9, 1, 5])).toBe(5);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('interpolates percentiles between the nearest ranks', () => {
    const values = Array.from({ length: 21 }, (_, index) => index * 10); // 0..200
    expect(percentile(values, 95)).toBe(190);
    expect(percentile([1, 2], 95)).toBeCloseTo(1.95, 10);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([3, 1, 2], 0)).toBe(1);
    expect(percentile([3, 1, 2], 100)).toBe(3);
  });

  it('does not reorder the caller\'s array', () => {
    const values = [3, 1, 2];
    percentile(values, 50);
    expect(values).toEqual([3, 1, 2]);
  });

  it('refuses percentiles outside 0..100', () => {
    expect(() => percentile([1], 101)).toThrow(RangeError);
    expect(() => percentile([1], -1)).toThrow(RangeError);
    expect(() => percentile([1], Number.NaN)).toThrow(RangeError);
  });

  it('gives NaN for ratios it cannot compute', () => {
    expect(ratio(3, 4)).toBe(0.75);
    expect(ratio(3, 0)).toBeNaN();
    expect(ratio(Number.NaN, 2)).toBeNaN();
  });

  it('fits a Theil–Sen line that one outlier does not tilt', () => {
    const points = [0, 1, 2, 3, 4, 5].map((x) => ({ x, y: 10 + 2 * x }));
    expect(theilSenLine(points)).toEqual({ intercept: 10, slope: 2 });
    // A least-squares line would move; the median of pairwise slopes does not.
    const disturbed = points.map((point) => (point.x === 3 ? { x: 3, y: 100 } : point));
    expect(theilSenLine(disturbed)).toEqual({ intercept: 10, slope: 2 });
    expect(theilSenLine([{ x: 5, y: 7 }, { x: 5, y: 9 }])).toEqual({ intercept: 8, slope: 0 });
    expect(theilSenLine([]).slope).toBeNaN();
  });
});
