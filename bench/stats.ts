/** Small statistics helpers shared by the benchmarks. */

/** The `p`-th percentile (0-100) by nearest rank; NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

/** The median (50th percentile by nearest rank). */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Rounds to `digits` decimals; keeps NaN as null-friendly NaN. */
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

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
