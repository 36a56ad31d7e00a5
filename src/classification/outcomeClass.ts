/**
 * What one attempt's outcome means for retrying:
 * - `success`: 1xx-3xx; done.
 * - `throttled`: the service asked us to slow down (429, 503, a 5xx ServerBusy); retried.
 * - `transient`: a fault that a later attempt can outlive (500, 502, other 5xx, connection resets); retried.
 * - `timeout`: the attempt ran out of time (408, 504, 500 OperationTimedOut, our per-attempt timeout); retried.
 * - `permanent`: retrying cannot help (most 4xx, 501, 505, unknown errors); surfaced at once.
 * - `aborted`: the caller aborted; never retried.
 */
export type OutcomeClass = "success" | "throttled" | "transient" | "timeout" | "permanent" | "aborted";

/** Every {@link OutcomeClass}, in a stable order (for docs, metrics and validation). */
export const OUTCOME_CLASSES: readonly OutcomeClass[] = [
  "success",
  "throttled",
  "transient",
  "timeout",
  "permanent",
  "aborted",
];

/** The outcome classes a retry can fix, each of which may have a backoff of its own. */
export type RetriableClass = "throttled" | "transient" | "timeout";

/** Every {@link RetriableClass}, in a stable order. */
export const RETRIABLE_CLASSES: readonly RetriableClass[] = ["throttled", "transient", "timeout"];

/** True for the classes a retry can fix: `throttled`, `transient` and `timeout`. */
export function isRetriableClass(outcomeClass: OutcomeClass): outcomeClass is RetriableClass {
  return outcomeClass === "throttled" || outcomeClass === "transient" || outcomeClass === "timeout";
}
