// Public surface of azure-storage-resilience: named re-exports only. What users of
// `installResilience` and of hand-built pipelines need; everything else is internal (tests and
// tools import it from its src/ path).

// Installing on an SDK client.
export { type InstallResilienceOptions, type ResilienceHandle, installResilience } from "./install/installResilience.js";
export { DEFAULTS } from "./install/defaults.js";
export type { StorageService } from "./address/partitionScope.js";

// Hand-built pipelines: the two policies and what they share.
export type { ResilientRetryPolicyOptions } from "./policies/retryPolicyOptions.js";
export { resilientRetryPolicy } from "./policies/resilientRetryPolicy.js";
export { ambiguousWriteReadBackPolicy } from "./ambiguousWrites/ambiguousWriteReadBack.js";
export { type PartitionBreaker, createPartitionBreaker } from "./breaker/partitionBreaker.js";
export type { PartitionBreakerOptions } from "./breaker/partitionBreakerOptions.js";
export type { PartitionStatus } from "./breaker/partitionBreakerInterface.js";
export { type RetryBudget, type RetryBudgetOptions, createRetryBudget } from "./flow/retryBudget.js";

// Backoff strategies.
export type { RetryStrategy } from "./backoff/retryStrategy.js";
export type { RetryStrategyConfig } from "./backoff/createRetryStrategy.js";
export type { BackoffByClass } from "./backoff/backoffByClass.js";
export { type FixedBackoffOptions, fixedBackoff } from "./backoff/fixedBackoff.js";
export { type ExponentialBackoffOptions, exponentialBackoff } from "./backoff/exponentialBackoff.js";
export { type DecorrelatedJitterBackoffOptions, decorrelatedJitterBackoff } from "./backoff/decorrelatedJitterBackoff.js";

// Classification.
export type { OutcomeClass } from "./classification/outcomeClass.js";
export { classify } from "./classification/classify.js";
export type { ClassificationRules } from "./classification/classificationRules.js";

// Errors and what an operation tells its caller.
export { ResilienceError, isResilienceError } from "./errors/resilienceError.js";
export { CircuitOpenError, isCircuitOpenError } from "./errors/circuitOpenError.js";
export { PartitionBusyError, isPartitionBusyError } from "./errors/partitionBusyError.js";
export { type RetryInfo, getRetryInfo } from "./policies/retryInfo.js";
export type { AmbiguousWriteResult } from "./ambiguousWrites/ambiguousWriteResult.js";

// Observers.
export type {
  AmbiguousWriteEvent,
  AttemptClass,
  AttemptEvent,
  LocalWaitEvent,
  OperationEvent,
  RetryEvent,
  RetryObserver,
  StopReason,
} from "./observers/retryEvents.js";
export { createRetryLogObserver } from "./observers/retryLogObserver.js";
export type { CallerOptions } from "./policies/callerPolicy.js";

// Tracing.
export type { TracingOptions } from "./tracing/tracingOptions.js";
export { createTracingObserver } from "./tracing/tracingObserver.js";
export { resendCountPolicy } from "./tracing/resendCountPolicy.js";

// Metrics.
export { METRIC_NAMES } from "./metrics/metricNames.js";
export { type MetricsObserver, type MetricsOptions, createMetricsObserver } from "./metrics/metricsObserver.js";
export { type OpenTelemetryMetricsOptions, createOpenTelemetryMetricsObserver } from "./metrics/openTelemetryObserver.js";
export { metricsHandler, startMetricsServer } from "./metrics/metricsServer.js";
