/** Options of {@link runStress}; the CLI's flags. */
export interface StressOptions {
  /** A real account; undefined for embedded Azurite. Never printed. */
  connectionString: string | undefined;
  /** The test table; undefined for a fresh `stress<timestamp>`. */
  table: string | undefined;
  /** The PartitionKey under test. Defaults to "stress". */
  partitionKey: string;
  /** Entities loaded before the ramp (about 1 KiB each). Defaults to 500. */
  entities: number;
  /** Entities/s of the first step. Defaults to 250. */
  startRate: number;
  /** Entities/s of the last step. Defaults to 2500. */
  maxRate: number;
  /** Number of steps. Defaults to 5. */
  steps: number;
  /** Seconds per step. Defaults to 5. */
  stepDurationInSeconds: number;
  /** Embedded only: the simulator throttles above this many entities/s; 0 for none. Defaults to 2000. */
  throttleAt: number;
  /** Where the HTML report goes; undefined for `./stress-report-<timestamp>.html`. */
  reportPath: string | undefined;
  /** Delete the test table afterwards. Defaults to false. */
  cleanup: boolean;
}

/** The per-partition scalability target the stress test compares against (entities/s). */
export const PARTITION_TARGET_PER_SECOND = 2_000;

/** Defaults of {@link StressOptions}. */
export const DEFAULT_STRESS_OPTIONS = Object.freeze({
  partitionKey: "stress",
  entities: 500,
  startRate: 250,
  maxRate: 2_500,
  steps: 5,
  stepDurationInSeconds: 5,
  throttleAt: PARTITION_TARGET_PER_SECOND,
  cleanup: false,
});

/** Bounds the CLI enforces. */
export const STRESS_LIMITS = Object.freeze({
  entities: { min: 10, max: 100_000 },
  rate: { min: 1, max: 50_000 },
  steps: { min: 1, max: 50 },
  stepDurationInSeconds: { min: 1, max: 600 },
  throttleAt: { min: 0, max: 1_000_000 },
});
