/** The prefix every metric name starts with unless `metrics.prefix` says otherwise. */
export const DEFAULT_METRICS_PREFIX = "azure_storage_";

/**
 * How a metric is recorded, in OpenTelemetry's words. Prometheus has counters, histograms and
 * gauges: the up-down counter and the two observables are gauges there (the observables read
 * from the breaker at scrape time).
 */
export type MetricKind = "counter" | "histogram" | "upDownCounter" | "observableUpDownCounter" | "observableGauge";

/** One metric, described once for both sinks. */
export interface MetricSpec {
  /** The Prometheus name after the prefix. */
  readonly name: string;
  readonly kind: MetricKind;
  /** The Prometheus label names, in their documented order; OpenTelemetry's attributes stand for them. */
  readonly labels: readonly string[];
  /** The HELP text, which is also the OpenTelemetry instrument's description. */
  readonly help: string;
  /** The OpenTelemetry instrument name; none for a metric OpenTelemetry reads elsewhere. */
  readonly otel?: string;
  /** The OpenTelemetry unit (UCUM): `s`, or an annotation such as `{attempt}`. */
  readonly unit?: string;
  /** The attribute keys of labels that do not take `OPEN_TELEMETRY_ATTRIBUTES`' key. */
  readonly attributes?: Readonly<Record<string, string>>;
  /** Registered on Prometheus only with this option on. */
  readonly only?: "partitionLabel" | "secondaryReads";
}

/** One series' label values by label name (`status` is a number, or absent without a response). */
export type Labels = Readonly<Record<string, string | number | undefined>>;

const OPERATION = ["service", "operation"] as const;

/**
 * The `outcome` label of operations, a fixed set whatever the service answers: `not_found`, `conflict`
 * and `precondition_failed` are ordinary answers where operationOutcome.ts says so; `partition_busy`
 * a `PartitionBusyError` (refused without a request: its paced partition's queue outlasts the deadline).
 */
export const OPERATION_OUTCOMES = ["success", "not_found", "conflict", "precondition_failed", "failure", "circuit_open", "partition_busy", "aborted"] as const;
export type OperationOutcome = (typeof OPERATION_OUTCOMES)[number];

/** The metrics of `METRIC_NAMES`, in the order of docs/metrics.md. */
const CORE_METRICS = {
  // OpenTelemetry counts operations as the count of `operationDuration`, as `http.client.request.duration` counts requests.
  operations: {
    name: "operations_total", kind: "counter", labels: [...OPERATION, "outcome"],
    help: `Logical Azure Storage operations by final outcome (${OPERATION_OUTCOMES.join(", ")}).`,
  },
  attempts: {
    name: "attempts_total", kind: "counter", labels: [...OPERATION, "class"],
    otel: "azure.storage.client.attempts", unit: "{attempt}",
    help: "Azure Storage attempts by classification, including attempts refused by an open circuit.",
  },
  retries: {
    name: "retries_total", kind: "counter", labels: [...OPERATION, "reason"],
    otel: "azure.storage.client.retries", unit: "{retry}",
    help: "Retries (waits before another attempt) by the class of the attempt that caused them.",
  },
  throttles: {
    name: "throttles_total", kind: "counter", labels: [...OPERATION, "status", "error_code"],
    otel: "azure.storage.client.throttles", unit: "{attempt}",
    help: "Throttled Azure Storage attempts (429, 503 ServerBusy) by status and allow-listed error code.",
  },
  retryDelay: {
    name: "retry_delay_seconds", kind: "histogram", labels: ["service", "reason"],
    otel: "azure.storage.client.retry.delay", unit: "s",
    help: "Wait before each retry, in seconds.",
  },
  operationDuration: {
    name: "operation_duration_seconds", kind: "histogram", labels: [...OPERATION, "outcome"],
    otel: "azure.storage.client.operation.duration", unit: "s",
    help: "Duration of logical operations, retries and waits included, in seconds.",
  },
  retriesExhausted: {
    name: "retries_exhausted_total", kind: "counter", labels: [...OPERATION, "class"],
    otel: "azure.storage.client.operation.exhausted", unit: "{operation}",
    help: "Operations that gave up on a retriable failure because retries, the deadline or the retry budget ran out.",
  },
  circuitBreakers: {
    name: "circuit_breakers", kind: "observableUpDownCounter", labels: ["service", "state"],
    otel: "azure.storage.client.circuit.count", unit: "{circuit}",
    help: "Live per-partition circuits by state.",
  },
  circuitTransitions: {
    name: "circuit_transitions_total", kind: "counter", labels: ["service", "to"],
    otel: "azure.storage.client.circuit.transitions", unit: "{transition}",
    help: "Per-partition circuit state changes, by the state entered.",
  },
  circuitRejections: {
    name: "circuit_rejections_total", kind: "counter", labels: OPERATION,
    otel: "azure.storage.client.circuit.rejections", unit: "{attempt}",
    help: "Attempts refused without a request because the partition's circuit was open.",
  },
  partitionThrottles: {
    name: "partition_throttles_total", kind: "counter", labels: ["service", "partition"],
    otel: "azure.storage.client.partition.throttles", unit: "{attempt}", only: "partitionLabel",
    help: "Throttled attempts by partition scope; only the top N scopes get their own label, the rest count as other.",
  },
  pacingDelay: {
    name: "pacing_delay_seconds", kind: "histogram", labels: OPERATION,
    otel: "azure.storage.client.pacing.delay", unit: "s",
    help: "Wait of each attempt that waited for its paced send slot (its partition answered throttled lately), in seconds.",
  },
  pacedPartitions: {
    name: "paced_partitions", kind: "observableUpDownCounter", labels: ["service"],
    otel: "azure.storage.client.paced_partition.count", unit: "{partition}",
    help: "Partition scopes whose attempts are paced because they answered throttled lately (hot partitions).",
  },
  partitionSendRate: {
    name: "partition_send_rate", kind: "observableGauge", labels: ["service", "partition"],
    otel: "azure.storage.client.partition.send_rate", unit: "{attempt}/s", only: "partitionLabel",
    help: "Send rate (attempts per second) each paced partition is held to; only scopes with their own partition label, the rest summed as other.",
  },
  pacedAccounts: {
    name: "paced_accounts", kind: "observableUpDownCounter", labels: ["service"],
    otel: "azure.storage.client.paced_account.count", unit: "{account}",
    help: "Accounts paced as a whole because they answer throttled as a whole (repeated throttles across partitions outnumbering successes).",
  },
  accountSendRate: {
    name: "account_send_rate", kind: "observableGauge", labels: ["service"],
    otel: "azure.storage.client.account.send_rate", unit: "{attempt}/s",
    help: "Send rate (attempts per second) the paced accounts are held to, summed; every attempt to such an account also keeps it.",
  },
  batchChangesetFailures: {
    name: "batch_changeset_failures_total", kind: "counter", labels: ["service", "class"],
    otel: "azure.storage.client.batch.changeset_failures", unit: "{attempt}",
    help: "Tables $batch attempts answered 202 Accepted whose changeset failed, by the class of the changeset's status and error code (throttled, transient and timeout ones are retried whole).",
  },
  localWaits: {
    name: "local_waits", kind: "upDownCounter", labels: ["service", "reason"],
    otel: "azure.storage.client.local_wait.count", unit: "{operation}",
    help: "Operations waiting now without sending, by reason: an open circuit, a paced slot, the retry budget, or a backoff. Many waiting while few run is a starving pool (declare caller: { concurrency }).",
  },
  localRefusals: {
    name: "local_refusals_total", kind: "counter", labels: ["service", "reason"],
    otel: "azure.storage.client.local_refusals", unit: "{operation}",
    help: "Operations that failed at once, or were let go while waiting, for a local reason (their caller may not wait, or waiting would outlast the deadline), by reason.",
  },
} as const satisfies Record<string, MetricSpec>;

/** The data-safety counters, documented beside `METRIC_NAMES`. */
const SAFETY_METRICS = {
  ambiguousWritesResolved: {
    name: "ambiguous_writes_resolved_total", kind: "counter", labels: [...OPERATION, "result"],
    otel: "azure.storage.client.ambiguous_writes", unit: "{write}",
    help: "Writes that ended after an attempt with an unknown outcome (reset, timeout), by how they were settled: applied, differs, unresolved, not_resolvable.",
  },
  retryBudgetExhausted: {
    name: "retry_budget_exhausted_total", kind: "counter", labels: ["service"],
    otel: "azure.storage.client.retry_budget.exhausted", unit: "{operation}",
    help: "Operations that surfaced their error without a retry because the client's retry budget was exhausted.",
  },
} as const satisfies Record<string, MetricSpec>;

/** The secondary-read counter, documented beside `METRIC_NAMES`. */
const SECONDARY_READ_METRICS = {
  secondaryReads: {
    // Its `outcome` is the answer's class, so OpenTelemetry names it as on attempts.
    name: "secondary_reads_total", kind: "counter", labels: [...OPERATION, "outcome"],
    otel: "azure.storage.client.secondary_reads", unit: "{attempt}", attributes: { outcome: "azure.storage.attempt.class" }, only: "secondaryReads",
    help: "Reads sent to the secondary region (secondaryReads) while the primary's partition could not serve them, by the class of the answer.",
  },
} as const satisfies Record<string, MetricSpec>;

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

/** Every metric the package records: the one list both sinks adapt. */
export const METRICS: Readonly<Record<MetricKey, MetricSpec>> = Object.freeze({ ...CORE_METRICS, ...SAFETY_METRICS, ...SECONDARY_READ_METRICS });

/** A key of {@link METRICS}. */
export type MetricKey = keyof typeof CORE_METRICS | keyof typeof SAFETY_METRICS | keyof typeof SECONDARY_READ_METRICS;

function namesOf<T extends Record<string, MetricSpec>>(metrics: T): Readonly<{ [K in keyof T]: T[K]["name"] }> {
  return Object.freeze(Object.fromEntries(Object.entries(metrics).map(([key, metric]) => [key, metric.name]))) as { [K in keyof T]: T[K]["name"] };
}

/**
 * Metric names after the prefix. Names and label sets are public API: dashboards and
 * alerts depend on them, so changing one is a breaking change.
 */
export const METRIC_NAMES = namesOf(CORE_METRICS);

/**
 * `x-ms-error-code` values that keep their own `error_code` label on throttles; any other
 * code becomes `other` and a missing one `none`, so the label stays small whatever a server sends.
 */
export const THROTTLE_ERROR_CODES: readonly string[] = ["ServerBusy", "TooManyRequests", "OperationTimedOut", "InternalError"];

/** Statuses that keep their own `status` label on throttles; others become `other`, none `none`. */
export const THROTTLE_STATUSES: readonly number[] = [429, 503, 500];

/**
 * Histogram buckets (seconds) for operation durations, retry delays and pacing delays: 5 ms to 60 s,
 * wider than prom-client's default 10 s, because a throttled operation can wait that long.
 */
export const DEFAULT_SECONDS_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
