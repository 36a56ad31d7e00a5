// The names of what the tracing observer writes on an operation's span. Public API as docs/tracing.md
// lists them (a test holds the page and this list together), but not exported: nothing in the API
// takes or returns a name, and users write them as strings in their trace queries. The keys the
// metrics also use come from their one list.
import { OPEN_TELEMETRY_ATTRIBUTES as METRIC_ATTRIBUTES } from "../metrics/metricNames.js";

/** The span events the tracing observer adds to the operation's span (the SDK client method's). */
export const TRACE_EVENTS = Object.freeze({
  /** One attempt sent (primary or secondary) came back: its class, status, error code, duration. */
  attempt: "azure.storage.attempt",
  /** One wait without sending (backoff, circuit, pacing, budget): planned and actual, timestamped when it began. */
  wait: "azure.storage.wait",
  /** The operation failed at once, or was let go, for a local reason (open circuit, paced queue, empty budget, busy caller). */
  refused: "azure.storage.refused",
  /** A write whose outcome was unknown ended: how it was settled (read back, or not). */
  ambiguousWrite: "azure.storage.ambiguous_write",
} as const);

/**
 * The attribute keys on those events and on the operation's span. Values are low-cardinality
 * (classes, reasons, states, codes made safe) or numbers; the partition only on opt-in.
 */
export const TRACE_ATTRIBUTES = Object.freeze({
  // Shared with the metrics' attributes: one name per fact.
  class: METRIC_ATTRIBUTES.class,
  status: METRIC_ATTRIBUTES.status,
  errorCode: METRIC_ATTRIBUTES.error_code,
  partition: METRIC_ATTRIBUTES.partition,
  ambiguousWriteResult: METRIC_ATTRIBUTES.result,
  /** The OpenTelemetry HTTP conventions' resend count: 0 for the first send, n for the n-th resend. */
  resendCount: "http.request.resend_count",
  attemptDurationInMs: "azure.storage.attempt.duration_ms",
  /** True for an attempt sent to the secondary region. */
  secondary: "azure.storage.attempt.secondary",
  waitReason: "azure.storage.wait.reason",
  waitSource: "azure.storage.wait.source",
  waitPlannedInMs: "azure.storage.wait.planned_ms",
  waitActualInMs: "azure.storage.wait.actual_ms",
  waitEnded: "azure.storage.wait.ended",
  /** The partition's state when the wait began: `healthy`, `paced`, `open`, `half_open` (as `partitionStatus`). */
  partitionState: "azure.storage.partition.state",
  /** A paced partition's send rate when the wait began (attempts/s). */
  partitionRatePerSecond: "azure.storage.partition.rate_per_s",
  stopReason: "azure.storage.stop_reason",
  retryAfterInMs: "azure.storage.retry_after_ms",
  unknownOutcomes: "azure.storage.ambiguous_write.unknown_outcomes",
  /** On the span: HTTP attempts sent for it (its HTTP child spans), summed over its operations. */
  attempts: "azure.storage.attempts",
  /** On the span: milliseconds waited without sending, summed over its operations. */
  waitedInMs: "azure.storage.waited_ms",
} as const);
