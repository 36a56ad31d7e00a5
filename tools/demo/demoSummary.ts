import type { RunTable } from "./runStats.js";
import type { Verification } from "./verifyWrites.js";

/** Azure's scalability target per partition (1 KiB entities), from the storage guidance. */
export const AZURE_PARTITION_TARGET_PER_SECOND = 2_000;

/** The runs' labels, the first line of each run's table. */
export const RESILIENT_LABEL = "With azure-storage-resilience (installResilience defaults: exponential retry, per-partition breaker, retry budget)";
export const BASELINE_LABEL = "With the SDK's default retry (3 retries, exponential from 1 s)";

/** One fault of the schedule, in seconds, as the summary reports it. */
export interface SummaryFault {
  name: string;
  description: string;
  /** The PartitionKey, or null for all partitions. */
  partition: string | null;
  startInSeconds: number;
  /** null when it lasts the whole run. */
  endInSeconds: number | null;
  probability?: number;
}

/** One run (resilient or baseline) in the summary. */
export interface RunSummary {
  /** How the client retried. */
  label: string;
  /** Operations planned and fired (fewer after Ctrl-C). */
  planned: number;
  fired: number;
  table: RunTable;
  /** Failures grouped by status, error code and (resilient) the policy's stop reason. */
  failureCauses: Array<{ cause: string; count: number }>;
  verification: Verification;
}

/** The metrics endpoint and the demo's own scrape of it during the run. */
export interface MetricsSummary {
  url: string;
  /** The scrape made halfway through; null if the run stopped before it. */
  scrape: { atInSeconds: number; status: number | null; azureStorageSeries: number; error?: string } | null;
}

/** Everything `demo --json` prints. */
export interface DemoSummary {
  command: "demo";
  options: { durationInSeconds: number; ratePerSecond: number; partitions: number; seed: number; baseline: boolean };
  /** True when Ctrl-C stopped the run early. */
  interrupted: boolean;
  /** Seconds the workload ran (fired operations), drain excluded. */
  ranForSeconds: number;
  throttleTarget: { entitiesPerSecondPerPartition: number; azureEntitiesPerSecondPerPartition: number; scaledDownBy: number };
  hotPartition: string;
  surge: { startInSeconds: number; endInSeconds: number; multiplier: number };
  faults: SummaryFault[];
  metrics: MetricsSummary;
  resilient: RunSummary;
  /** null with `--no-baseline`. */
  baseline: RunSummary | null;
}
