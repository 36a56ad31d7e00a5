import type { SecondStats, StepStats, ThrottlingStart } from "./stressStats.js";

/** Where the stress test ran. Never holds a key or SAS. */
export interface StressTarget {
  kind: "embedded" | "account";
  /** The account name. */
  account: string;
  /** The Table endpoint's host (and port). */
  endpointHost: string;
  /** Embedded: the simulator's throttling threshold in entities/s; null when none. */
  simulatedThrottleAt: number | null;
}

/** Everything `stress --json` prints and the HTML report shows. */
export interface StressResult {
  command: "stress";
  target: StressTarget;
  table: string;
  partitionKey: string;
  loadedEntities: number;
  /** The per-partition target compared against (entities/s). */
  targetPerSecond: number;
  stepDurationInSeconds: number;
  steps: StepStats[];
  timeline: SecondStats[];
  throttlingStarted: ThrottlingStart | null;
  verdict: string;
  /** True when Ctrl-C stopped the ramp early. */
  interrupted: boolean;
  tableDeleted: boolean;
  /** Absolute path of the HTML report. */
  reportPath: string;
  /** When the run started (ISO 8601). */
  startedAt: string;
}
