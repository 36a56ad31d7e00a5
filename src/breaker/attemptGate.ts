import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { WakeSource } from "../timing/wake.js";

/**
 * Decides when an attempt may go to the network, and learns from what came back: the
 * per-partition breaker (circuits for partitions that serve nothing, pacing for hot ones)
 * is one. The retry loop asks {@link AttemptGate.admit} before every attempt and reports
 * every attempt it sent to {@link AttemptGate.record}. Both are synchronous and must not
 * throw. Whether a refused attempt waits is the caller policy's answer (`caller`), not the gate's.
 */
export interface AttemptGate {
  /**
   * May an attempt for `address` go out? `remainingInMs` is the caller's time left: a gate
   * that would make the attempt wait longer refuses instead. Asked again with `reserved`
   * when a paced wait has ended. A send admission confirms the slot (send now), except a new
   * one with `reserved`'s own `ticket` (the same object) and a `delayInMs` above 0, which is the rest of the
   * wait: a gate may hand a long wait out in slices and move the slot earlier meanwhile. A
   * refusal says the partition stopped serving meanwhile, or the slot is further off than the
   * caller may now wait.
   */
  admit(address: RequestAddress, remainingInMs: number, reserved?: SendAdmission): Admission;
  /** The attempt admitted by `admission` came back with `result`. */
  record(address: RequestAddress, admission: SendAdmission, result: AttemptResult): void;
  /**
   * Optional: the loop will not send on `admission` (its operation ended, was let go, or goes
   * back to wait for the retry budget). A gate gives back what the admission held, such as a
   * half-open circuit's probe, so that another attempt may take it at once. Must not throw.
   */
  abandon?(address: RequestAddress, admission: SendAdmission): void;
  /**
   * Optional, and free of side effects: whether `address`'s partition refuses attempts now
   * (its circuit is open, or half-open with the probe out). The retry loop asks it during a
   * backoff, so that an operation which may not wait on a partition (a caller declared
   * `failFast`, or bounded) does not sleep out a backoff whose end the gate would refuse.
   */
  refusesNow?(address: RequestAddress): boolean;
  /**
   * Optional: what wakes an operation backing off after a failure on `address`'s partition once
   * its circuit says when the partition is tried again (it opened: the retry waits for its probe;
   * it closed: a probe found it back) or its paced queue was let out; undefined when the gate keeps
   * nothing for it. The retry then asks `admit` at once, as any attempt.
   */
  wakeOf?(address: RequestAddress): WakeSource | undefined;
}

/** The gate's answer: send (perhaps after a paced delay), or not now. */
export type Admission = SendAdmission | Refusal;

/** Send the attempt after `delayInMs` (0 unless its partition is paced). */
export interface SendAdmission {
  readonly decision: "send";
  readonly delayInMs: number;
  /** The gate's own note (e.g. when the slot was granted), handed back to `record`. */
  readonly ticket?: unknown;
  /**
   * The partition is paced: the gate holds its attempts to what it serves, so a retry sent
   * on this admission is not counted against the retry budget (which bounds retries where
   * nothing else does).
   */
  readonly paced?: boolean;
  /**
   * The attempt is a half-open circuit's probe: its failure is the circuit's (the partition is
   * still out), so the operation's next try waits for the next probe and uses up no retry.
   */
  readonly probe?: boolean;
  /**
   * Fires when the paced wait may end sooner than `delayInMs` (the scope's queue was let out:
   * its outage ended, its pacer was dropped): the loop then asks again at once.
   */
  readonly wake?: WakeSource;
}

/** Not now: the partition's circuit is open, or its pacing queue would outlast the caller's deadline. */
export interface Refusal {
  readonly decision: "refuse";
  readonly reason: RefusalReason;
  /** The partition scope refused, e.g. `"table|acct|orders|pk-1"`. */
  readonly scope: string;
  /** When to ask again. */
  readonly retryAfterInMs: number;
  /**
   * A half-open circuit with its probe out: `retryAfterInMs` is only a poll interval, and the
   * circuit may admit sooner (when the probe answers), so a caller with less time left may still wait.
   */
  readonly probeOut?: boolean;
  /**
   * Fires when the refusal may no longer hold (the circuit closed: its probe found the partition
   * back, or its account serves again): every waiter asks again at once instead of at its poll.
   */
  readonly wake?: WakeSource;
}

/** Why a gate refused an attempt. */
export type RefusalReason = "circuit-open" | "paced";

/** The answer of a gate with nothing to say about a request. Shared: it holds no state. */
export const SEND_NOW: SendAdmission = Object.freeze({ decision: "send", delayInMs: 0 });
