import { isRetriableClass, type OutcomeClass } from "../classification/outcomeClass.js";

/**
 * True for the outcomes a partition being moved produces, the only ones that count
 * against its circuit: `throttled` (503 ServerBusy), `timeout` (500 OperationTimedOut,
 * 504, client-side timeouts) and `transient` (connection resets, 500/502). A 404, 409,
 * 412 or any other `permanent` outcome proves the partition answers, so it never trips
 * a circuit; `aborted` says nothing about the partition.
 *
 * The same classes a retry can fix ({@link isRetriableClass}): what a partition being moved
 * produces is exactly what is worth retrying.
 */
export function isRebalancingOutcome(outcomeClass: OutcomeClass): boolean {
  return isRetriableClass(outcomeClass);
}
