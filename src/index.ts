// Public surface of azure-storage-resilience: named re-exports only.

export type { OutcomeClass } from "./classification/outcomeClass.js";
export { OUTCOME_CLASSES, isRetriableClass } from "./classification/outcomeClass.js";
export type { AttemptOutcome } from "./classification/classify.js";
export { classify, classifyStatus } from "./classification/classify.js";
export type { ClassificationRules } from "./classification/classificationRules.js";
export { TIMEOUT_ERROR_CODES, TRANSIENT_ERROR_CODES } from "./classification/networkErrors.js";

export type { RetryStrategy, RetryStrategyKind, RandomSource } from "./backoff/retryStrategy.js";
export { noRetry } from "./backoff/noRetry.js";
export type { FixedBackoffOptions } from "./backoff/fixedBackoff.js";
export { fixedBackoff, DEFAULT_FIXED_BACKOFF } from "./backoff/fixedBackoff.js";
export type { ExponentialBackoffOptions } from "./backoff/exponentialBackoff.js";
export { exponentialBackoff, exponentialDelayInMs, DEFAULT_EXPONENTIAL_BACKOFF } from "./backoff/exponentialBackoff.js";
export type { DecorrelatedJitterBackoffOptions } from "./backoff/decorrelatedJitterBackoff.js";
export { decorrelatedJitterBackoff, decorrelatedDelayInMs, DEFAULT_DECORRELATED_JITTER_BACKOFF } from "./backoff/decorrelatedJitterBackoff.js";
export type { BackoffByClass } from "./backoff/backoffByClass.js";
export type { RetriableClass } from "./classification/outcomeClass.js";
export { RETRIABLE_CLASSES } from "./classification/outcomeClass.js";
export type { RetryStrategyConfig } from "./backoff/createRetryStrategy.js";
export { createRetryStrategy } from "./backoff/createRetryStrategy.js";

export { parseRetryAfterInMs } from "./timing/retryAfter.js";

export type { ResilienceErrorCode } from "./errors/resilienceError.js";
export { ResilienceError, isResilienceError } from "./errors/resilienceError.js";
export { CircuitOpenError, isCircuitOpenError } from "./errors/circuitOpenError.js";
export { PartitionBusyError, isPartitionBusyError } from "./errors/partitionBusyError.js";

export type { ResilientRetryPolicyOptions } from "./policies/retryPolicyOptions.js";
export { DEFAULT_RETRY_POLICY_OPTIONS } from "./policies/retryPolicyOptions.js";
export { resilientRetryPolicy, resilientRetryPolicyName } from "./policies/resilientRetryPolicy.js";
export type {
  AttemptClass,
  AttemptEvent,
  DelaySource,
  LocalRefusalEvent,
  LocalWaitReason,
  LocalWaitEvent,
  OperationEvent,
  RetryEvent,
  RetryObserver,
  StopReason,
} from "./observers/retryEvents.js";
export type { Admission, AttemptGate, Refusal, RefusalReason, SendAdmission } from "./policies/attemptGate.js";
export { SEND_NOW } from "./policies/attemptGate.js";
export type { AttemptResult } from "./classification/attemptResult.js";
export type { CallerOptions } from "./policies/callerPolicy.js";
export type { EntityKeys, RequestAddress } from "./address/requestAddress.js";
export { readRequestAddress } from "./address/requestAddress.js";
export type { RetryInfo } from "./policies/retryInfo.js";
export { getRetryInfo } from "./policies/retryInfo.js";

export type { StorageService } from "./partition/partitionScope.js";
export type { InstallResilienceOptions, ResilienceHandle } from "./install/installResilience.js";
export { installResilience, SDK_RETRY_POLICY_NAMES } from "./install/installResilience.js";
export type { ServicePreset } from "./presets/servicePresets.js";
export { SERVICE_PRESETS } from "./presets/servicePresets.js";

export {
  DEFAULT_METRICS_PREFIX,
  DEFAULT_SECONDS_BUCKETS,
  METRIC_LABELS,
  METRIC_NAMES,
  OPERATION_OUTCOMES,
  THROTTLE_ERROR_CODES,
  THROTTLE_STATUSES,
} from "./metrics/metricNames.js";
export type { MetricKey, OperationOutcome } from "./metrics/metricNames.js";
export type { MetricsOptions, PartitionLabelOptions } from "./metrics/metricsOptions.js";
export { DEFAULT_METRICS_OPTIONS } from "./metrics/metricsOptions.js";
export type { MetricsObserver } from "./metrics/metricsObserver.js";
export type { PacedScope, PacedScopeSource } from "./metrics/pacingMetrics.js";
export { createMetricsObserver } from "./metrics/metricsObserver.js";
export type { OpenTelemetryMetricsOptions } from "./metrics/openTelemetryOptions.js";
export { createOpenTelemetryMetricsObserver } from "./metrics/openTelemetryObserver.js";
export type { OpenTelemetryInstrumentKind, OpenTelemetryMetricKey, OpenTelemetryMetricSpec } from "./metrics/openTelemetryNames.js";
export { OPEN_TELEMETRY_ATTRIBUTES, OPEN_TELEMETRY_METER_NAME, OPEN_TELEMETRY_METRICS } from "./metrics/openTelemetryNames.js";
export type { OperationRequest, StorageOperation } from "./address/storageOperation.js";
export { STORAGE_OPERATIONS, storageOperationName } from "./address/storageOperation.js";
export type { PartitionScope } from "./partition/partitionScope.js";
export { OTHER_PARTITION_LABEL } from "./metrics/topScopeLabels.js";
export type { MetricsRequestHandler } from "./metrics/metricsHandler.js";
export { metricsHandler } from "./metrics/metricsHandler.js";
export type { MetricsServer, MetricsServerOptions } from "./metrics/metricsServer.js";
export { DEFAULT_METRICS_SERVER_OPTIONS, startMetricsServer } from "./metrics/metricsServer.js";

export type { CircuitState, CircuitStateSource, CircuitTransition } from "./breaker/circuitStateSource.js";
export type { PartitionBreaker } from "./breaker/partitionBreaker.js";
export type { PartitionStatus } from "./breaker/partitionStatus.js";
export { HEALTHY_PARTITION } from "./breaker/partitionStatus.js";
export { createPartitionBreaker } from "./breaker/partitionBreaker.js";
export type { PartitionBreakerOptions } from "./breaker/partitionBreakerOptions.js";
export { DEFAULT_PARTITION_BREAKER_OPTIONS } from "./breaker/partitionBreakerOptions.js";
export { isRebalancingOutcome } from "./breaker/isRebalancingOutcome.js";
export type { PacingOptions } from "./flow/pacingOptions.js";
export { DEFAULT_PACING_OPTIONS } from "./flow/pacingOptions.js";

export type { RetryLogObserverOptions } from "./observers/retryLogObserver.js";
export { createRetryLogObserver } from "./observers/retryLogObserver.js";

export type { RetryBudget, RetryBudgetOptions, RetryBudgetSnapshot } from "./budget/retryBudget.js";
export { createRetryBudget, DEFAULT_RETRY_BUDGET_OPTIONS } from "./budget/retryBudget.js";
export type { AmbiguousWriteResult } from "./ambiguousWrites/ambiguousWriteResult.js";
export { AMBIGUOUS_WRITE_RESULTS } from "./ambiguousWrites/ambiguousWriteResult.js";
export type { TableWrite, TableWriteKind } from "./ambiguousWrites/tableWrite.js";
export { describeTableWrite } from "./ambiguousWrites/tableWrite.js";
export { isUnknownOutcome } from "./ambiguousWrites/isUnknownOutcome.js";
export { entityMatches } from "./ambiguousWrites/entityMatches.js";
export { ambiguousWriteReadBackPolicy, ambiguousWriteReadBackPolicyName } from "./policies/ambiguousWriteReadBack.js";
export type { AmbiguousWriteOptions } from "./policies/retryPolicyOptions.js";
export type { ReadBackRoute, ReadBackRoutes } from "./ambiguousWrites/readBackRoutes.js";
export { createReadBackRoutes } from "./ambiguousWrites/readBackRoutes.js";
export { DEFAULT_AMBIGUOUS_WRITE_OPTIONS } from "./policies/retryPolicyOptions.js";
export type { AmbiguousWriteEvent } from "./observers/retryEvents.js";
export { isPossiblyApplied } from "./policies/retryInfo.js";
export { SAFETY_METRIC_NAMES, createSafetyMetricsObserver } from "./safety/safetyMetrics.js";
export type { SecondaryReadOptions } from "./policies/secondaryReads.js";
export { SECONDARY_READ_METRIC_NAMES, createSecondaryReadMetricsObserver } from "./metrics/secondaryReadMetrics.js";
export type { HeaderSource } from "./timing/retryAfter.js";
