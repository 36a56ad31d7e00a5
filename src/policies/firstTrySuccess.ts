import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { RetryObserver } from "./retryEvents.js";

/**
 * Internal, not exported from the package: an observer with a method under this key
 * records an operation that succeeded on its first attempt (most operations) through that
 * one call, `[recordFirstTrySuccess](request, elapsedInMs)`, instead of an `onAttempt`
 * and an `onOperationEnd` event. It must record exactly what those two events would have
 * (an attempt of class `success`, then an operation ended with stop reason `success` after
 * `elapsedInMs`); its other hooks are called as usual on every other path. Saves the
 * success path two event objects and two rounds of observer calls (the package's metrics
 * observer is the one user).
 */
export const recordFirstTrySuccess: unique symbol = Symbol("azure-storage-resilience.recordFirstTrySuccess");

/** An observer that records first-try successes in one call (see {@link recordFirstTrySuccess}). */
export interface FirstTrySuccessRecorder extends RetryObserver {
  [recordFirstTrySuccess](request: PipelineRequest, elapsedInMs: number): void;
}

/** True when `observer` records first-try successes in one call. */
export function isFirstTrySuccessRecorder(observer: RetryObserver): observer is FirstTrySuccessRecorder {
  return typeof (observer as Partial<FirstTrySuccessRecorder>)[recordFirstTrySuccess] === "function";
}
