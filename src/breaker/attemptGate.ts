import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { WakeSource } from "../timing/wake.js";

/**
 * Decides when an attempt may go to the network, and learns from what came back: the
 * per-partition breaker is one. The retry loop asks {@link AttemptGate.admit} before every
 * attempt, and hands each admission back: an attempt sent to {@link AttemptGate.record} with its
 * answer, a wait to the next `admit`, anything not used to {@link AttemptGate.release}. All are
 * synchronous and must not throw. Whether a refused attempt waits is the caller policy's answer
 * (`caller`), not the gate's.
 */
export interface AttemptGate {
  /**
   * May an attempt for `address` go out now? `ask.queueForInMs` is the longest the caller may
   * wait: a gate that would make it wait longer refuses instead. `ask.waited`: the wait this
   * operation was handed last, asked again (its place in the queue is kept). `ask.retry`: the
   * operation has sent an attempt before.
   */
  admit(address: RequestAddress, ask: AdmissionRequest): Admission;
  /** The attempt `sent` came back with `result`. */
  record(address: RequestAddress, sent: Send, result: AttemptResult): void;
  /** `admission` will not be used (its operation ended, was let go, or waits for the retry budget): what it holds goes back. */
  release?(address: RequestAddress, admission: Send | Wait): void;
  /**
   * Free of side effects: whether `address`'s partition takes no attempt now but its probes (it
   * serves nothing). The retry loop asks it during the backoff of a caller that may not wait, so
   * that it does not sleep out a backoff whose end the gate would refuse.
   */
  refusesNow?(address: RequestAddress): boolean;
  /** What wakes an operation backing off after a failure on `address`'s partition: the partition went out, or came back. */
  wakeOf?(address: RequestAddress): WakeSource | undefined;
}

/** What the loop asks the gate with. */
export interface AdmissionRequest {
  readonly queueForInMs: number;
  readonly retry: boolean;
  readonly waited?: Wait;
}

/** The gate's answer: send now, wait, or not now. */
export type Admission = Send | Wait | Refusal;

/** Send the attempt now; hand this back to `record`. */
export interface Send {
  readonly decision: "send";
  /**
   * The attempt goes to a scope the gate limits: its rate holds what is sent, so a retry on it is
   * not counted against the retry budget (which bounds retries where nothing else does).
   */
  readonly paced?: boolean;
  /** The attempt is a probe of a scope that serves nothing: its failure uses up no retry, the operation waits for the next. */
  readonly probe?: boolean;
}

/** Wait up to `delayInMs`, or until `wake` fires, then ask again with this wait. */
export interface Wait {
  readonly decision: "wait";
  /** For a probe of a scope that serves nothing (`circuit`), or for a paced scope's next send (`pacing`). */
  readonly reason: "circuit" | "pacing";
  readonly delayInMs: number;
  readonly wake?: WakeSource;
}

/** Not now: the scope serves nothing until past the caller's deadline, or its queue is longer than the caller may wait. */
export interface Refusal {
  readonly decision: "refuse";
  readonly reason: RefusalReason;
  /** The partition scope refused, e.g. `"table|acct|orders|pk-1"`. */
  readonly scope: string;
  /** When to ask again. */
  readonly retryAfterInMs: number;
}

/** Why a gate refused an attempt. */
export type RefusalReason = "circuit-open" | "paced";

/** The answer of a gate with nothing to say about a request. Shared: it holds no state. */
export const SEND_NOW: Send = Object.freeze({ decision: "send" });
