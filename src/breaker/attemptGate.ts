import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { WakeSource } from "../timing/wake.js";

/**
 * Decides when an attempt may go to the network, and learns from what came back (the partition
 * breaker is one). The retry loop asks `admit` before every attempt and hands each admission
 * back: a send to `record` with its answer, a wait to the next `admit`, anything unused to
 * `release`. All are synchronous and must not throw.
 */
export interface AttemptGate {
  admit(address: RequestAddress, ask: AdmissionRequest): Admission;
  record(address: RequestAddress, sent: Send, result: AttemptResult): void;
  /** `admission` will not be used (its operation ended, was let go, or waits for the retry budget): what it holds goes back. */
  release?(address: RequestAddress, admission: Send | Wait): void;
  /** Free of side effects: whether `address`'s scope serves nothing (only its probes go): a backoff whose end would be refused is cut short. */
  refusesNow?(address: RequestAddress): boolean;
  /** What wakes an operation backing off after a failure on `address`'s partition: the partition went out, or came back. */
  wakeOf?(address: RequestAddress): WakeSource | undefined;
}

/** What the loop asks the gate with. */
export interface AdmissionRequest {
  /** The longest the caller may wait: a gate that would make it wait longer refuses instead. */
  readonly queueForInMs: number;
  /** The operation has sent an attempt before. */
  readonly retry: boolean;
  /** The wait this operation was handed last, asked again (its place in the queue is kept). */
  readonly waited?: Wait;
}

/** The gate's answer: send now, wait, or not now. */
export type Admission = Send | Wait | Refusal;

/** Send the attempt now; hand this back to `record`. */
export interface Send {
  readonly decision: "send";
  /** It goes to a scope the gate limits: the scope's rate bounds it, so a retry on it is not counted against the retry budget. */
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
  readonly reason: "circuit-open" | "paced";
  /** The partition scope refused, e.g. `"table|acct|orders|pk-1"`. */
  readonly scope: string;
  readonly retryAfterInMs: number;
}

/** The answer of a gate with nothing to say about a request. Shared: it holds no state. */
export const SEND_NOW: Send = Object.freeze({ decision: "send" });
