import { isRetriableClass } from "../classification/outcomeClass.js";
import type { AttemptClass, DelaySource, StopReason } from "../observers/retryEvents.js";

/**
 * The retry loop's decision after an attempt (or a gate's refusal), as a pure function of
 * what the loop knows: no clock, no I/O, no randomness. The loop does the waiting.
 */
export type NextStep =
  | { readonly action: "stop"; readonly reason: StopReason }
  | { readonly action: "retry"; readonly delayInMs: number; readonly source: DelaySource }
  | { readonly action: "read-back" };

/** What the loop knows when it decides. */
export interface DecisionInput {
  /** The attempt's class; `circuit_open` when the gate refused it. */
  readonly attemptClass: AttemptClass;
  /** Retries sent so far (0 after the first attempt). */
  readonly retriesDone: number;
  readonly maxRetries: number;
  /** Milliseconds left before the operation's deadline. */
  readonly remainingInMs: number;
  /** The strategy's wait before the next retry (already made safe to wait on). */
  readonly backoffInMs: number;
  /** The server's `Retry-After` hint, capped by `maxRetryAfterInMs`, when it sent one. */
  readonly retryAfterInMs: number | undefined;
  /** Whether the request's body can be sent again. */
  readonly bodyReplayable: boolean;
  /**
   * A write whose earlier attempt had an unknown outcome got the answer that attempt's
   * success would cause (409 after an insert, 404 after a delete), and read-back is on.
   */
  readonly answerMayBeOurs: boolean;
  /** For `circuit_open`: whether the gate asks callers to wait, and for how long. */
  readonly gateWaits: boolean;
  readonly gateWaitInMs: number;
}

const STOP = (reason: StopReason): NextStep => ({ action: "stop", reason });

/** Decides the next step (the table in test/unit/policies/decideNext.test.ts). */
export function decideNext(input: DecisionInput): NextStep {
  const cls = input.attemptClass;
  if (cls === "success") return STOP("success");
  if (cls === "aborted") return STOP("aborted");
  if (cls === "circuit_open") {
    if (!input.gateWaits || input.gateWaitInMs > input.remainingInMs) return STOP("circuit-open");
    return { action: "retry", delayInMs: input.gateWaitInMs, source: "circuit" };
  }
  if (!isRetriableClass(cls)) return input.answerMayBeOurs ? { action: "read-back" } : STOP("permanent");
  if (!input.bodyReplayable) return STOP("body-not-replayable");
  if (input.retriesDone >= input.maxRetries) return STOP("retries-exhausted");
  const hint = input.retryAfterInMs;
  const [delayInMs, source]: [number, DelaySource] =
    hint !== undefined && hint > input.backoffInMs ? [hint, "retry-after"] : [input.backoffInMs, "backoff"];
  if (delayInMs >= input.remainingInMs) return STOP("deadline");
  return { action: "retry", delayInMs, source };
}
