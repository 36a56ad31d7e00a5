/** The prefix every metric name starts with unless `metrics.prefix` says otherwise. */
export const DEFAULT_METRICS_PREFIX = "azure_storage_";

/**
 * Metric names after the prefix. Names and label sets are public API: dashboards and
 * alerts depend on them, so changing one is a breaking change.
 */
export const METRIC_NAMES = Object.freeze({
  /** Counter: logical operations by final outcome. */
  operations: "operations_total",
  /** Counter: every attempt by class, including attempts refused by an open circuit. */
  attempts: "attempts_total",
  /** Counter: retries (waits before another attempt) by the class that caused them. */
  retries: "retries_total",
  /** Counter: throttled attempts (429, 503 ServerBusy) by status and allow-listed error code. */
  throttles: "throttles_total",
  /** Histogram: each retry's wait, in seconds. */
  retryDelay: "retry_delay_seconds",
  /** Histogram: each operation's duration, retries and waits included, in seconds. */
  operationDuration: "operation_duration_seconds",
  /** Counter: operations that gave up on a retriable failure (retries or deadline spent). */
  retriesExhausted: "retries_exhausted_total",
  /** Gauge: live circuits per state. */
  circuitBreakers: "circuit_breakers",
  /** Counter: circuit state changes by target state. */
  circuitTransitions: "circuit_transitions_total",
  /** Counter: attempts refused by an open circuit. */
  circuitRejections: "circuit_rejections_total",
  /** Counter (opt-in): throttled attempts by bounded partition label. */
  partitionThrottles: "partition_throttles_total",
  /** Histogram: how long each attempt that waited for its paced send slot waited, in seconds. */
  pacingDelay: "pacing_delay_seconds",
  /** Gauge: partition scopes whose attempts are paced (hot partitions), read from the breaker at scrape time. */
  pacedPartitions: "paced_partitions",
  /** Gauge (opt-in): the send rate (attempts/s) each paced partition is held to, by bounded partition label. */
  partitionSendRate: "partition_send_rate",
  /** Gauge: accounts paced as a whole because they throttle as a whole, read from the breaker at scrape time. */
  pacedAccounts: "paced_accounts",
  /** Gauge: the send rate (attempts/s) paced accounts are held to, summed (no account label). */
  accountSendRate: "account_send_rate",
  /** Counter: Tables `$batch` attempts answered 202 whose changeset failed, by the class of its status and code. */
  batchChangesetFailures: "batch_changeset_failures_total",
  /** Gauge: operations waiting now without sending, by reason (circuit, pacing, budget, backoff). */
  localWaits: "local_waits",
  /** Counter: operations that failed at once (or were let go while waiting) for a local reason, by reason. */
  localRefusals: "local_refusals_total",
} as const);

/** A key of {@link METRIC_NAMES}. */
export type MetricKey = keyof typeof METRIC_NAMES;

/** The label names of each metric, in the order documented in docs/metrics.md. Public API. */
export const METRIC_LABELS: Readonly<Record<MetricKey, readonly string[]>> = Object.freeze({
  operations: ["service", "operation", "outcome"],
  attempts: ["service", "operation", "class"],
  retries: ["service", "operation", "reason"],
  throttles: ["service", "operation", "status", "error_code"],
  retryDelay: ["service", "reason"],
  operationDuration: ["service", "operation", "outcome"],
  retriesExhausted: ["service", "operation", "class"],
  circuitBreakers: ["service", "state"],
  circuitTransitions: ["service", "to"],
  circuitRejections: ["service", "operation"],
  partitionThrottles: ["service", "partition"],
  pacingDelay: ["service", "operation"],
  pacedPartitions: ["service"],
  partitionSendRate: ["service", "partition"],
  pacedAccounts: ["service"],
  accountSendRate: ["service"],
  batchChangesetFailures: ["service", "class"],
  localWaits: ["service", "reason"],
  localRefusals: ["service", "reason"],
});

/** Metric names (after the prefix) of the data-safety counters, documented beside `METRIC_NAMES`. */
export const SAFETY_METRIC_NAMES = Object.freeze({
  /** Counter `{service,operation,result}`: writes that ended after an attempt with an unknown outcome, by how they were settled. */
  ambiguousWritesResolved: "ambiguous_writes_resolved_total",
  /** Counter `{service}`: operations that stopped retrying because the client's retry budget was empty. */
  retryBudgetExhausted: "retry_budget_exhausted_total",
} as const);

/** Metric name (after the prefix) of the secondary-read counter, documented beside `METRIC_NAMES`. */
export const SECONDARY_READ_METRIC_NAMES = Object.freeze({
  /** Counter `{service,operation,outcome}`: reads sent to the secondary region, by the class of their answer. */
  secondaryReads: "secondary_reads_total",
} as const);

/**
 * The `outcome` label of operations: how a logical operation ended. `partition_busy`: refused
 * without a request because its partition is paced and the queue for it would outlast the
 * operation's deadline (a `PartitionBusyError`, to be rescheduled after `retryAfterInMs`).
 */
export type OperationOutcome = "success" | "failure" | "circuit_open" | "partition_busy" | "aborted";

/** Every {@link OperationOutcome}. */
export const OPERATION_OUTCOMES: readonly OperationOutcome[] = ["success", "failure", "circuit_open", "partition_busy", "aborted"];

/**
 * `x-ms-error-code` values that keep their own `error_code` label on throttles; any other
 * code becomes `other` and a missing one `none`, so the label stays small whatever a server sends.
 */
export const THROTTLE_ERROR_CODES: readonly string[] = [
  "ServerBusy",
  "TooManyRequests",
  "OperationTimedOut",
  "InternalError",
];

/** Statuses that keep their own `status` label on throttles; others become `other`, none `none`. */
export const THROTTLE_STATUSES: readonly number[] = [429, 503, 500];

/**
 * Histogram buckets (seconds) for operation durations, retry delays and pacing delays: 5 ms to 60 s,
 * wider than prom-client's default 10 s, because a throttled operation can wait that long.
 */
export const DEFAULT_SECONDS_BUCKETS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
