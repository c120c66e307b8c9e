/** Small descriptive statistics for benchmark figures. Empty input gives NaN, never a throw. */

export function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : sum(values) / values.length;
}

/**
 * The `p`-th percentile (0–100) with linear interpolation between the two nearest ranks (numpy's default),
 * so p50 of an even-length list is the mean of its middle pair.
 * @throws RangeError when `p` is outside 0..100.
 */
export function percentile(values: readonly number[], p: number): number {
  if (!(p >= 0 && p <= 100)) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lower = Math.floor(rank);
  const upper = Math.ceil(rank);
  const low = sorted[lower] ?? Number.NaN;
  const high = sorted[upper] ?? Number.NaN;
  return low + (high - low) * (rank - lower);
}

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** `numerator / denominator`, or NaN when the denominator is 0 or either side is not finite. */
export function ratio(numerator: number, denominator: number): number {
  if (!Number.isFinite(numerator) || !Number.isFinite(denominator) || denominator === 0) return Number.NaN;
  return numerator / denominator;
}

/** A straight line y = intercept + slope · x. */
export interface Line {
  intercept: number;
  slope: number;
}

/**
 * The Theil–Sen line through the points: the slope is the median of the slopes between every pair of points
 * with different x, the intercept the median of y − slope · x. Robust: one disturbed point out of a handful
 * does not tilt it (a least-squares line would follow it). With fewer than two distinct x values the slope is
 * 0 and the intercept the median of y. NaN for no points.
 */
export function theilSenLine(points: readonly { x: number; y: number }[]): Line {
  if (points.length === 0) return { intercept: Number.NaN, slope: Number.NaN };
  const slopes: number[] = [];
  for (let i = 0; i < points.length; i++) {
    for (let j = i + 1; j < points.length; j++) {
      const a = points[i]!;
      const b = points[j]!;
      if (a.x !== b.x) slopes.push((b.y - a.y) / (b.x - a.x));
    }
  }
  const slope = slopes.length === 0 ? 0 : median(slopes);
  return { intercept: median(points.map((point) => point.y - slope * point.x)), slope };
}
