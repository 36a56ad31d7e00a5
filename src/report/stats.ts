/** Latency figures of a set of operations, in whole milliseconds. */
export interface LatencySummary {
  /** How many values were summarised. */
  count: number;
  /** The median; undefined when there were no values. */
  p50InMs: number | undefined;
  /** The 99th percentile; undefined when there were no values. */
  p99InMs: number | undefined;
  /** The largest value; undefined when there were no values. */
  maxInMs: number | undefined;
}

/**
 * The `p`-th percentile (0 < p <= 100) of `values` by the nearest-rank method: the
 * smallest value with at least p % of the values at or below it. Undefined for no values.
 * Nearest rank never invents a latency nobody saw, unlike interpolation.
 */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (!(p > 0 && p <= 100)) throw new RangeError(`p must be in (0, 100]; got ${p}.`);
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)];
}

/** p50, p99 and max of `valuesInMs`, rounded to whole milliseconds. */
export function summarizeLatencies(valuesInMs: readonly number[]): LatencySummary {
  const round = (value: number | undefined) => (value === undefined ? undefined : Math.round(value));
  return {
    count: valuesInMs.length,
    p50InMs: round(percentile(valuesInMs, 50)),
    p99InMs: round(percentile(valuesInMs, 99)),
    maxInMs: round(valuesInMs.length === 0 ? undefined : Math.max(...valuesInMs)),
  };
}
