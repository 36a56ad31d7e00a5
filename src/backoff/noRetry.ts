import type { RetryStrategy } from "./retryStrategy.js";

/** The "no retry" strategy: fail at the first error. Simple, but risks losing data (see docs/retry.md). */
export function noRetry(): RetryStrategy {
  return {
    kind: "none",
    maxRetries: 0,
    maxDelayInMs: 0,
    delayInMs: () => 0,
  };
}
