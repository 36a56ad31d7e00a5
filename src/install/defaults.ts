import { DEFAULT_DECORRELATED_JITTER_BACKOFF } from "../backoff/decorrelatedJitterBackoff.js";
import { DEFAULT_EXPONENTIAL_BACKOFF } from "../backoff/exponentialBackoff.js";
import { DEFAULT_FIXED_BACKOFF } from "../backoff/fixedBackoff.js";
import { DEFAULT_PARTITION_BREAKER_OPTIONS } from "../breaker/partitionBreakerOptions.js";
import { DEFAULT_RETRY_BUDGET_OPTIONS } from "../flow/retryBudget.js";
import { DEFAULT_METRICS_OPTIONS } from "../metrics/metricsObserver.js";
import { DEFAULT_METRICS_SERVER_OPTIONS } from "../metrics/metricsServer.js";
import { DEFAULT_AMBIGUOUS_WRITE_OPTIONS, DEFAULT_RETRY_POLICY_OPTIONS } from "../policies/retryPolicyOptions.js";

/**
 * Every option's default, by the factory or option it belongs to, for reading at run time
 * (each option's doc comment states its default too). `installResilience` starts from the
 * per-service presets in docs/configuration.md instead for `retry`, `backoff`,
 * `maxElapsedInMs` and `tryTimeoutInMs`.
 *
 * @example
 * DEFAULTS.partitionBreaker.resetTimeoutInMs; // 300
 */
export const DEFAULTS = Object.freeze({
  /** {@link resilientRetryPolicy}'s own options. */
  retryPolicy: DEFAULT_RETRY_POLICY_OPTIONS,
  /** {@link exponentialBackoff}, the policy's default strategy. */
  exponentialBackoff: DEFAULT_EXPONENTIAL_BACKOFF,
  /** {@link decorrelatedJitterBackoff}. */
  decorrelatedJitterBackoff: DEFAULT_DECORRELATED_JITTER_BACKOFF,
  /** {@link fixedBackoff}. */
  fixedBackoff: DEFAULT_FIXED_BACKOFF,
  /** The `ambiguousWrites` option. */
  ambiguousWrites: DEFAULT_AMBIGUOUS_WRITE_OPTIONS,
  /** {@link createPartitionBreaker}. */
  partitionBreaker: DEFAULT_PARTITION_BREAKER_OPTIONS,
  /** {@link createRetryBudget}. */
  retryBudget: DEFAULT_RETRY_BUDGET_OPTIONS,
  /** {@link createMetricsObserver}. */
  metrics: DEFAULT_METRICS_OPTIONS,
  /** {@link startMetricsServer}. */
  metricsServer: DEFAULT_METRICS_SERVER_OPTIONS,
});
