import type { MetricKey } from "./metricNames.js";

/** The instruments the OpenTelemetry sink creates. */
export type OpenTelemetryInstrumentKind = "counter" | "histogram" | "upDownCounter" | "observableUpDownCounter" | "observableGauge";

/** One OpenTelemetry instrument: its name, kind, unit (UCUM) and description. */
export interface OpenTelemetryMetricSpec {
  /** The instrument name, e.g. `azure.storage.client.attempts`. */
  readonly name: string;
  /** Which instrument it is created as. */
  readonly kind: OpenTelemetryInstrumentKind;
  /** The UCUM unit: `s`, or an annotation such as `{attempt}`. */
  readonly unit: string;
  /** The instrument's description, as exporters show it. */
  readonly description: string;
}

/**
 * A measurement's key: those of {@link METRIC_NAMES} and `SAFETY_METRIC_NAMES`, except
 * `operations`, which OpenTelemetry reads as the count of `operationDuration` (one histogram
 * per operation instead of a counter beside it, as `http.client.request.duration` does).
 */
export type OpenTelemetryMetricKey = Exclude<MetricKey, "operations"> | "ambiguousWritesResolved" | "retryBudgetExhausted" | "secondaryReads";

/**
 * The OpenTelemetry sink's instruments, after OpenTelemetry's semantic conventions: `.`
 * namespaces under `azure.storage.client`, the unit in `unit` (seconds `s` for durations,
 * `{attempt}`-style annotations for counts), never in the name, no `_total`. Names and
 * attribute keys are public API, as the Prometheus names are (docs/metrics.md has both side by side).
 */
export const OPEN_TELEMETRY_METRICS: Readonly<Record<OpenTelemetryMetricKey, OpenTelemetryMetricSpec>> = Object.freeze({
  operationDuration: {
    name: "azure.storage.client.operation.duration",
    kind: "histogram",
    unit: "s",
    description: "Duration of logical Azure Storage operations, retries and waits included; its count is the number of operations, by outcome.",
  },
  attempts: {
    name: "azure.storage.client.attempts",
    kind: "counter",
    unit: "{attempt}",
    description: "Azure Storage attempts by classification, including attempts refused by an open circuit.",
  },
  retries: {
    name: "azure.storage.client.retries",
    kind: "counter",
    unit: "{retry}",
    description: "Retries (waits before another attempt) by the class of the attempt that caused them.",
  },
  throttles: {
    name: "azure.storage.client.throttles",
    kind: "counter",
    unit: "{attempt}",
    description: "Throttled Azure Storage attempts (429, 503 ServerBusy) by status and allow-listed error code.",
  },
  retryDelay: { name: "azure.storage.client.retry.delay", kind: "histogram", unit: "s", description: "Wait before each retry." },
  retriesExhausted: {
    name: "azure.storage.client.operation.exhausted",
    kind: "counter",
    unit: "{operation}",
    description: "Operations that gave up on a retriable failure because retries, the deadline or the retry budget ran out.",
  },
  circuitBreakers: {
    name: "azure.storage.client.circuit.count",
    kind: "observableUpDownCounter",
    unit: "{circuit}",
    description: "Live per-partition circuits by state, read from the breaker at collection time.",
  },
  circuitTransitions: {
    name: "azure.storage.client.circuit.transitions",
    kind: "counter",
    unit: "{transition}",
    description: "Per-partition circuit state changes, by the state entered.",
  },
  circuitRejections: {
    name: "azure.storage.client.circuit.rejections",
    kind: "counter",
    unit: "{attempt}",
    description: "Attempts refused without a request because the partition's circuit was open.",
  },
  partitionThrottles: {
    name: "azure.storage.client.partition.throttles",
    kind: "counter",
    unit: "{attempt}",
    description: "Throttled attempts by partition scope; only the top N scopes get their own value, the rest count as other.",
  },
  pacingDelay: {
    name: "azure.storage.client.pacing.delay",
    kind: "histogram",
    unit: "s",
    description: "Wait of each attempt that waited for its paced send slot (its partition answered throttled lately).",
  },
  pacedPartitions: {
    name: "azure.storage.client.paced_partition.count",
    kind: "observableUpDownCounter",
    unit: "{partition}",
    description: "Partition scopes whose attempts are paced because they answered throttled lately (hot partitions).",
  },
  partitionSendRate: {
    name: "azure.storage.client.partition.send_rate",
    kind: "observableGauge",
    unit: "{attempt}/s",
    description: "Send rate each paced partition is held to; only scopes with their own partition value, the rest summed as other.",
  },
  pacedAccounts: {
    name: "azure.storage.client.paced_account.count",
    kind: "observableUpDownCounter",
    unit: "{account}",
    description: "Accounts paced as a whole because they answer throttled as a whole (repeated throttles across partitions outnumbering successes).",
  },
  accountSendRate: {
    name: "azure.storage.client.account.send_rate",
    kind: "observableGauge",
    unit: "{attempt}/s",
    description: "Send rate the paced accounts are held to, summed; every attempt to such an account also keeps it.",
  },
  batchChangesetFailures: {
    name: "azure.storage.client.batch.changeset_failures",
    kind: "counter",
    unit: "{attempt}",
    description: "Tables $batch attempts answered 202 Accepted whose changeset failed, by the class of the changeset's status and error code.",
  },
  secondaryReads: {
    name: "azure.storage.client.secondary_reads",
    kind: "counter",
    unit: "{attempt}",
    description: "Reads sent to the secondary region (secondaryReads) while the primary's partition could not serve them, by the class of the answer.",
  },
  ambiguousWritesResolved: {
    name: "azure.storage.client.ambiguous_writes",
    kind: "counter",
    unit: "{write}",
    description: "Writes that ended after an attempt with an unknown outcome (reset, timeout), by how they were settled.",
  },
  localWaits: {
    name: "azure.storage.client.local_wait.count",
    kind: "upDownCounter",
    unit: "{operation}",
    description: "Operations waiting now without sending, by reason: an open circuit, a paced slot, the retry budget, or a backoff.",
  },
  localRefusals: {
    name: "azure.storage.client.local_refusals",
    kind: "counter",
    unit: "{operation}",
    description: "Operations that failed at once, or were let go while waiting, for a local reason, by reason.",
  },
  retryBudgetExhausted: {
    name: "azure.storage.client.retry_budget.exhausted",
    kind: "counter",
    unit: "{operation}",
    description: "Operations that surfaced their error without a retry because the client's retry budget was exhausted.",
  },
});

/**
 * The attribute key standing for each Prometheus label. `status` becomes the semantic
 * conventions' `http.response.status_code`, an integer (absent when there was no response);
 * `state` and `to` are both the circuit's state (entered, for transitions).
 */
export const OPEN_TELEMETRY_ATTRIBUTES = Object.freeze({
  service: "azure.storage.service",
  operation: "azure.storage.operation.name",
  outcome: "azure.storage.operation.outcome",
  class: "azure.storage.attempt.class",
  reason: "azure.storage.retry.reason",
  status: "http.response.status_code",
  error_code: "azure.storage.error.code",
  state: "azure.storage.circuit.state",
  to: "azure.storage.circuit.state",
  partition: "azure.storage.partition",
  result: "azure.storage.ambiguous_write.result",
} as const);

/** The name of the meter the sink uses when given none (`metrics.getMeter(...)` of `@opentelemetry/api`). */
export const OPEN_TELEMETRY_METER_NAME = "azure-storage-resilience";
