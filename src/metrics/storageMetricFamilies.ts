import type { Registry, RegistryContentType } from "prom-client";
import { CollectedGaugeFamily, CounterFamily, HistogramFamily, registerFamily } from "./metricFamily.js";
import { METRIC_LABELS, METRIC_NAMES, SAFETY_METRIC_NAMES, SECONDARY_READ_METRIC_NAMES, type MetricKey } from "./metricNames.js";

/** The families one registry holds under one prefix, shared by every install on them. */
export interface StorageMetricFamilies {
  operations: CounterFamily;
  attempts: CounterFamily;
  retries: CounterFamily;
  throttles: CounterFamily;
  retryDelay: HistogramFamily;
  operationDuration: HistogramFamily;
  retriesExhausted: CounterFamily;
  circuitBreakers: CollectedGaugeFamily;
  circuitTransitions: CounterFamily;
  circuitRejections: CounterFamily;
  pacingDelay: HistogramFamily;
  pacedPartitions: CollectedGaugeFamily;
  pacedAccounts: CollectedGaugeFamily;
  accountSendRate: CollectedGaugeFamily;
  batchChangesetFailures: CounterFamily;
  localWaits: CollectedGaugeFamily;
  localRefusals: CounterFamily;
  /** Only when the bounded partition label is enabled. */
  partitionThrottles?: CounterFamily;
  /** Only when the bounded partition label is enabled. */
  partitionSendRate?: CollectedGaugeFamily;
  ambiguousWritesResolved: CounterFamily;
  retryBudgetExhausted: CounterFamily;
  /** Only when reads may go to the secondary region. */
  secondaryReads?: CounterFamily;
}

/** The data-safety and secondary-read counters: name, HELP text and labels. */
const EXTRA_COUNTERS = {
  ambiguousWritesResolved: {
    name: SAFETY_METRIC_NAMES.ambiguousWritesResolved,
    help: "Writes that ended after an attempt with an unknown outcome (reset, timeout), by how they were settled: applied, differs, unresolved, not_resolvable.",
    labelNames: ["service", "operation", "result"],
  },
  retryBudgetExhausted: {
    name: SAFETY_METRIC_NAMES.retryBudgetExhausted,
    help: "Operations that surfaced their error without a retry because the client's retry budget was exhausted.",
    labelNames: ["service"],
  },
  secondaryReads: {
    name: SECONDARY_READ_METRIC_NAMES.secondaryReads,
    help: "Reads sent to the secondary region (secondaryReads) while the primary's partition could not serve them, by the class of the answer.",
    labelNames: ["service", "operation", "outcome"],
  },
} as const;

/** HELP texts; they show in `/metrics` output and Grafana's metric browser. */
const HELP: Readonly<Record<MetricKey, string>> = {
  operations: "Logical Azure Storage operations by final outcome (success, failure, circuit_open, aborted).",
  attempts: "Azure Storage attempts by classification, including attempts refused by an open circuit.",
  retries: "Retries (waits before another attempt) by the class of the attempt that caused them.",
  throttles: "Throttled Azure Storage attempts (429, 503 ServerBusy) by status and allow-listed error code.",
  retryDelay: "Wait before each retry, in seconds.",
  operationDuration: "Duration of logical operations, retries and waits included, in seconds.",
  retriesExhausted: "Operations that gave up on a retriable failure because retries, the deadline or the retry budget ran out.",
  circuitBreakers: "Live per-partition circuits by state.",
  circuitTransitions: "Per-partition circuit state changes, by the state entered.",
  circuitRejections: "Attempts refused without a request because the partition's circuit was open.",
  partitionThrottles: "Throttled attempts by partition scope; only the top N scopes get their own label, the rest count as other.",
  pacingDelay: "Wait of each attempt that waited for its paced send slot (its partition answered throttled lately), in seconds.",
  pacedPartitions: "Partition scopes whose attempts are paced because they answered throttled lately (hot partitions).",
  batchChangesetFailures:
    "Tables $batch attempts answered 202 Accepted whose changeset failed, by the class of the changeset's status and error code (throttled, transient and timeout ones are retried whole).",
  pacedAccounts: "Accounts paced as a whole because they answer throttled as a whole (repeated throttles across partitions outnumbering successes).",
  accountSendRate: "Send rate (attempts per second) the paced accounts are held to, summed; every attempt to such an account also keeps it.",
  localWaits:
    "Operations waiting now without sending, by reason: an open circuit, a paced slot, the retry budget, or a backoff. Many waiting while few run is a starving pool (declare caller: { concurrency }).",
  localRefusals:
    "Operations that failed at once, or were let go while waiting, for a local reason (their caller may not wait, or waiting would outlast the deadline), by reason.",
  partitionSendRate: "Send rate (attempts per second) each paced partition is held to; only scopes with their own partition label, the rest summed as other.",
};

/**
 * Finds or registers every family on `registry` under `prefix` (see {@link registerFamily}).
 * Throws a clear error when a name is taken by a foreign metric.
 */
export function storageMetricFamilies(
  registry: Registry<RegistryContentType>,
  prefix: string,
  bucketsInSeconds: readonly number[],
  withPartitionLabel: boolean,
  withSecondaryReads: boolean,
): StorageMetricFamilies {
  const counter = (key: MetricKey): CounterFamily => {
    const name = prefix + METRIC_NAMES[key];
    const labelNames = METRIC_LABELS[key];
    return registerFamily(registry, {
      name,
      help: HELP[key],
      type: "counter",
      labelNames,
      create: () => new CounterFamily(name, HELP[key], labelNames),
    });
  };
  const histogram = (key: MetricKey): HistogramFamily => {
    const name = prefix + METRIC_NAMES[key];
    const labelNames = METRIC_LABELS[key];
    return registerFamily(registry, {
      name,
      help: HELP[key],
      type: "histogram",
      labelNames,
      upperBounds: bucketsInSeconds,
      create: () => new HistogramFamily(name, HELP[key], labelNames, bucketsInSeconds),
    });
  };
  const gauge = (key: MetricKey): CollectedGaugeFamily => {
    const name = prefix + METRIC_NAMES[key];
    const labelNames = METRIC_LABELS[key];
    return registerFamily(registry, {
      name,
      help: HELP[key],
      type: "gauge",
      labelNames,
      create: () => new CollectedGaugeFamily(name, HELP[key], labelNames),
    });
  };
  const extraCounter = (key: keyof typeof EXTRA_COUNTERS): CounterFamily => {
    const { help, labelNames } = EXTRA_COUNTERS[key];
    const name = prefix + EXTRA_COUNTERS[key].name;
    return registerFamily(registry, { name, help, type: "counter", labelNames, create: () => new CounterFamily(name, help, labelNames) });
  };
  const families: StorageMetricFamilies = {
    operations: counter("operations"),
    attempts: counter("attempts"),
    retries: counter("retries"),
    throttles: counter("throttles"),
    retryDelay: histogram("retryDelay"),
    operationDuration: histogram("operationDuration"),
    retriesExhausted: counter("retriesExhausted"),
    circuitBreakers: gauge("circuitBreakers"),
    circuitTransitions: counter("circuitTransitions"),
    circuitRejections: counter("circuitRejections"),
    pacingDelay: histogram("pacingDelay"),
    pacedPartitions: gauge("pacedPartitions"),
    pacedAccounts: gauge("pacedAccounts"),
    accountSendRate: gauge("accountSendRate"),
    batchChangesetFailures: counter("batchChangesetFailures"),
    ambiguousWritesResolved: extraCounter("ambiguousWritesResolved"),
    retryBudgetExhausted: extraCounter("retryBudgetExhausted"),
    localWaits: gauge("localWaits"),
    localRefusals: counter("localRefusals"),
  };
  if (withSecondaryReads) families.secondaryReads = extraCounter("secondaryReads");
  if (withPartitionLabel) {
    families.partitionThrottles = counter("partitionThrottles");
    families.partitionSendRate = gauge("partitionSendRate");
  }
  return families;
}
