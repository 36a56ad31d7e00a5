import { hasCodeAndName, ResilienceError } from "./resilienceError.js";

/**
 * Thrown, without touching the network, when the circuit of the request's partition scope
 * is open (the partition is being rebalanced). `scope` names the partition without secrets;
 * `retryAfterInMs` is the time until the breaker lets a probe through.
 */
export class CircuitOpenError extends ResilienceError {
  /** The partition scope whose circuit is open, e.g. "table|myaccount|orders|2024-06". */
  readonly scope: string;
  /**
   * Milliseconds until the next probe may go through. While a probe is in flight
   * (half-open) it is a polling interval instead, one reset period (a waiter in the
   * retry policy is woken as soon as the probe closes the circuit).
   */
  readonly retryAfterInMs: number;

  constructor(scope: string, retryAfterInMs: number, options?: { cause?: unknown }) {
    super(
      "CIRCUIT_OPEN",
      `The circuit for partition scope "${scope}" is open (the partition is failing, likely being rebalanced); ` +
        `next probe in ${Math.ceil(retryAfterInMs)} ms.`,
      options,
    );
    this.name = "CircuitOpenError";
    this.scope = scope;
    this.retryAfterInMs = retryAfterInMs;
  }
}

/** True for a {@link CircuitOpenError}, even from another copy of the package. */
export function isCircuitOpenError(error: unknown): error is CircuitOpenError {
  return hasCodeAndName(error, "CIRCUIT_OPEN", "CircuitOpenError");
}
