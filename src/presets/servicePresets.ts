import type { ExponentialBackoffOptions } from "../backoff/exponentialBackoff.js";
import type { StorageService } from "../partition/partitionScope.js";

/** The defaults `installResilience` applies for one service; every field can be overridden. */
export interface ServicePreset {
  /** Exponential backoff numbers (the storage guidance's formula). */
  retry: Readonly<Required<Omit<ExponentialBackoffOptions, "random">>>;
  /** Overall deadline per operation, retries included. */
  maxElapsedInMs: number;
  /** Client-side timeout per attempt (0 = none). */
  tryTimeoutInMs: number;
}

/**
 * Documented defaults per service (docs/retry.md explains each number).
 * - table: a partition that is offline for 10 s is ridden out even at the low end of the
 *   jitter (waits 740, 2020, 4580, 9700 ms: over 17 s in four retries), well inside a
 *   60 s deadline; 30 s per attempt matches the service's own operation timeout.
 * - queue: one partition per queue, same rebalancing behaviour as tables.
 * - blob: uploads and downloads of large blobs take long, so no per-attempt timeout by
 *   default and a 5-minute deadline; waits grow to 30 s like the storage SDK's.
 */
export const SERVICE_PRESETS: Readonly<Record<StorageService, Readonly<ServicePreset>>> = Object.freeze({
  table: Object.freeze({
    retry: Object.freeze({ maxRetries: 6, baseDelayInMs: 800, minDelayInMs: 100, maxDelayInMs: 10_000, jitter: 0.2 }),
    maxElapsedInMs: 60_000,
    tryTimeoutInMs: 30_000,
  }),
  queue: Object.freeze({
    retry: Object.freeze({ maxRetries: 6, baseDelayInMs: 800, minDelayInMs: 100, maxDelayInMs: 10_000, jitter: 0.2 }),
    maxElapsedInMs: 60_000,
    tryTimeoutInMs: 30_000,
  }),
  blob: Object.freeze({
    retry: Object.freeze({ maxRetries: 5, baseDelayInMs: 1000, minDelayInMs: 100, maxDelayInMs: 30_000, jitter: 0.2 }),
    maxElapsedInMs: 300_000,
    tryTimeoutInMs: 0,
  }),
});
