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

/** The median (50th percentile by nearest rank); undefined for no values. */
export function median(values: readonly number[]): number | undefined {
  return percentile(values, 50);
}

/** Rounds to `digits` decimals. */
export function round(value: number, digits = 0): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** Counts events (times in ms from the run's start) into bins of `binInMs` over `[0, totalInMs)`. */
export function binCounts(times: readonly number[], binInMs: number, totalInMs: number): number[] {
  const bins = new Array<number>(Math.max(1, Math.ceil(totalInMs / binInMs))).fill(0);
  for (const time of times) {
    const index = Math.floor(time / binInMs);
    if (index >= 0 && index < bins.length) bins[index] = (bins[index] ?? 0) + 1;
  }
  return bins;
}
