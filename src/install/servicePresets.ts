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

/** Tables and Queue: one preset, since a queue is one partition that rebalances as a table's does (below). */
const TABLE_AND_QUEUE: Readonly<ServicePreset> = Object.freeze({
  retry: Object.freeze({ maxRetries: 6, baseDelayInMs: 375, minDelayInMs: 375, maxDelayInMs: 10_000, jitter: 0.2 }),
  backoff: Object.freeze({ transient: FAST_TRANSIENT }),
  maxElapsedInMs: 60_000,
  tryTimeoutInMs: 30_000,
});

/**
 * Documented defaults per service (docs/retry.md explains each number).
 * - table: the guidance's formula with a 375 ms floor and step: waits of 675-825, 1275-1725,
 *   2475-3525, 4875-7125 ms, then 10 s, the SDK default's means (750, 1500, 3000, 6000 ms)
 *   with less jitter. A caller making one call after another meets a busy spell at its start
 *   and pays two waits per spell of a second: as much as with the SDK default, and as many
 *   attempts (650-850 then 1450-2050 ms cost 0.3 s more a spell; docs/benchmarks.md §9). A
 *   partition offline for 10 s is ridden out even at the low end of the jitter (9.3 s in four
 *   retries, 19 s in five), well inside a 60 s deadline; 30 s per attempt matches the
 *   service's own operation timeout.
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
  table: TABLE_AND_QUEUE,
  queue: TABLE_AND_QUEUE,
  blob: Object.freeze({
    retry: Object.freeze({ maxRetries: 5, baseDelayInMs: 1000, minDelayInMs: 100, maxDelayInMs: 30_000, jitter: 0.2 }),
    backoff: Object.freeze({ transient: FAST_TRANSIENT }),
    maxElapsedInMs: 300_000,
    tryTimeoutInMs: 0,
  }),
});
