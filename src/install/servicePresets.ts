import type { RetriableClass } from "../classification/outcomeClass.js";
import type { ExponentialBackoffOptions } from "../backoff/exponentialBackoff.js";
import type { StorageService } from "../address/partitionScope.js";

/** The defaults `installResilience` applies for one service; every field can be overridden. */
export interface ServicePreset {
  /** Exponential backoff numbers (the storage guidance's formula); a class without its own below uses them. */
  retry: Readonly<Required<Omit<ExponentialBackoffOptions, "random">>>;
  /** Exponential numbers per outcome class, where a class is better served than by `retry`'s; `maxRetries` is `retry`'s. */
  backoff: Readonly<Partial<Record<RetriableClass, Readonly<Required<Omit<ExponentialBackoffOptions, "random" | "maxRetries">>>>>>;
  /** Overall deadline per operation, retries included. */
  maxElapsedInMs: number;
  /** Client-side timeout per attempt (0 = none). */
  tryTimeoutInMs: number;
}

/** `transient` in every preset: waits of 42-58, 106-154, 234-346 ms ... (the guidance's formula from 40 ms). */
const FAST_TRANSIENT = Object.freeze({ baseDelayInMs: 40, minDelayInMs: 10, maxDelayInMs: 10_000, jitter: 0.2 });

/**
 * `throttled` for tables and queues: waits of 650-850, 1450-2050, 3050-4450, 6250-9250 ms
 * (the guidance's formula with a 250 ms floor and a 500 ms step: over 11 s in four retries at
 * the low end of the jitter, so a 10 s partition move is still ridden out). The second wait is
 * about the SDK default's (1-2 s), not the 2-2.9 s of the `retry` preset: a partition busy for
 * a second answers the first retry still busy when the first answer came early in it, and a
 * caller making one call after another paid a second a time for the longer wait.
 */
const THROTTLED = Object.freeze({ baseDelayInMs: 500, minDelayInMs: 250, maxDelayInMs: 10_000, jitter: 0.2 });

/**
 * Documented defaults per service (docs/retry.md explains each number).
 * - table: a partition that is offline for 10 s is ridden out even at the low end of the
 *   jitter (waits 740, 2020, 4580, 9700 ms: over 17 s in four retries), well inside a
 *   60 s deadline; 30 s per attempt matches the service's own operation timeout.
 * - queue: one partition per queue, same rebalancing behaviour as tables.
 * - blob: uploads and downloads of large blobs take long, so no per-attempt timeout by
 *   default and a 5-minute deadline; waits grow to 30 s like the storage SDK's.
 * Per class (docs/retry.md, "Backoff per outcome class"): `transient` (a connection reset,
 * 500, 502) first retries within tens of milliseconds (42-58 ms): it is usually one bad
 * pooled connection, and the retry goes out on a new one; repeated, its waits still grow to
 * seconds. `throttled` and `timeout` keep the guidance's backoff above: both are what a
 * partition being moved answers, and a shorter timeout wait only sends more attempts into its
 * outage (docs/benchmarks.md, "Backoff per class").
 */
export const SERVICE_PRESETS: Readonly<Record<StorageService, Readonly<ServicePreset>>> = Object.freeze({
  table: Object.freeze({
    retry: Object.freeze({ maxRetries: 6, baseDelayInMs: 800, minDelayInMs: 100, maxDelayInMs: 10_000, jitter: 0.2 }),
    backoff: Object.freeze({ transient: FAST_TRANSIENT, throttled: THROTTLED }),
    maxElapsedInMs: 60_000,
    tryTimeoutInMs: 30_000,
  }),
  queue: Object.freeze({
    retry: Object.freeze({ maxRetries: 6, baseDelayInMs: 800, minDelayInMs: 100, maxDelayInMs: 10_000, jitter: 0.2 }),
    backoff: Object.freeze({ transient: FAST_TRANSIENT, throttled: THROTTLED }),
    maxElapsedInMs: 60_000,
    tryTimeoutInMs: 30_000,
  }),
  blob: Object.freeze({
    retry: Object.freeze({ maxRetries: 5, baseDelayInMs: 1000, minDelayInMs: 100, maxDelayInMs: 30_000, jitter: 0.2 }),
    backoff: Object.freeze({ transient: FAST_TRANSIENT }),
    maxElapsedInMs: 300_000,
    tryTimeoutInMs: 0,
  }),
});
