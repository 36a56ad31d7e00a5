/** Options of {@link runDemo}; the CLI's flags. */
export interface DemoOptions {
  /** Seconds of workload. Defaults to 20. */
  durationInSeconds: number;
  /** Operations per second across all partitions (the hot partition doubles during its surge). Defaults to 40. */
  ratePerSecond: number;
  /** Number of partitions, `p0` (hot) ... Defaults to 4. */
  partitions: number;
  /** Seed of the workload and the simulator's fault draws. Defaults to 1. */
  seed: number;
  /** Whether to run the same workload with the SDK's default retry alongside. Defaults to true. */
  baseline: boolean;
}

/** The demo's defaults: short enough for a first look, long enough to show a partition move. */
export const DEFAULT_DEMO_OPTIONS: Readonly<DemoOptions> = Object.freeze({
  durationInSeconds: 20,
  ratePerSecond: 40,
  partitions: 4,
  seed: 1,
  baseline: true,
});

/** Bounds the CLI enforces on the demo's numbers. */
export const DEMO_LIMITS = Object.freeze({
  durationInSeconds: { min: 1, max: 3_600 },
  ratePerSecond: { min: 1, max: 2_000 },
  partitions: { min: 1, max: 26 },
  seed: { min: 0, max: 2 ** 32 - 1 },
});
