import type { PipelineRequest, PipelineResponse } from "@azure/core-rest-pipeline";
import type { RequestAddress } from "../address/requestAddress.js";
import type { OutcomeClass } from "../classification/outcomeClass.js";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";

/** An attempt's class as the policy reports it: an outcome class, or refused by an open circuit. */
export type AttemptClass = OutcomeClass | "circuit_open";

/** Why the policy stopped retrying an operation. */
export type StopReason =
  | "success"
  | "permanent"
  | "aborted"
  | "retries-exhausted"
  | "deadline"
  | "body-not-replayable"
  | "circuit-open"
  /** The client's retry budget had no retry left (the account is throttled as a whole). */
  | "budget-exhausted"
  /** The partition is paced (hot) and its queue would outlast the operation's deadline, or what the caller may wait. */
  | "partition-busy"
  /** A bounded caller (`caller: { concurrency }`) had no spare slot for this operation to sleep a backoff in. */
  | "caller-busy";

/** Why an operation waits without sending, or was refused: the `reason` label of the local-wait metrics. */
export type LocalWaitReason = LocalWaitEvent["reason"];

/** Reported after every attempt, including ones refused by an open circuit. */
export interface AttemptEvent {
  request: PipelineRequest;
  /** What the request addresses, read once per operation (for the package's own observers). @internal */
  address: RequestAddress;
  /** 1 for the first attempt. */
  attempt: number;
  attemptClass: AttemptClass;
  status?: number;
  errorCode?: string;
  /**
   * True when `status` and `errorCode` are those of a failed changeset inside a Tables
   * `$batch` answered 202 Accepted (the transaction applied nothing); otherwise undefined.
   */
  inChangeset?: boolean;
  /** True when the attempt read the secondary region (`secondaryReads`); otherwise undefined. */
  secondary?: boolean;
  durationInMs: number;
  /** How long the attempt waited for its paced send slot (0 when its partition is not paced). */
  pacedDelayInMs: number;
}

/** Reported before the policy sleeps ahead of another attempt. */
export interface RetryEvent {
  request: PipelineRequest;
  /** What the request addresses, read once per operation (for the package's own observers). @internal */
  address: RequestAddress;
  /** The attempt that failed (1-based). */
  attempt: number;
  /** The class that made the policy retry. */
  reason: AttemptClass;
  /** The failed attempt's HTTP status, when it had a response. */
  status?: number;
  /** The failed attempt's `x-ms-error-code`, when it had one. */
  errorCode?: string;
  delayInMs: number;
  /** Where the wait came from: the strategy's backoff, the server's `Retry-After`, or an open circuit's reset. */
  delaySource: "backoff" | "retry-after" | "circuit";
}

/** Reported once per operation, when the policy returns or throws. */
export interface OperationEvent {
  request: PipelineRequest;
  /** What the request addresses, read once per operation (for the package's own observers). @internal */
  address: RequestAddress;
  response?: PipelineResponse;
  error?: unknown;
  attempts: number;
  /** The class of the last attempt. */
  finalClass: AttemptClass;
  stopReason: StopReason;
  elapsedInMs: number;
}

/**
 * Reported when a write ends after an attempt whose outcome is unknown, unless a later
 * attempt simply succeeded (see docs/data-safety.md).
 */
export interface AmbiguousWriteEvent {
  request: PipelineRequest;
  /** What the request addresses, read once per operation (for the package's own observers). @internal */
  address: RequestAddress;
  /** The write's `operation` label, or `other` for writes that are not Tables entity writes. */
  operation: "insert_entity" | "update_entity" | "delete_entity" | "upsert_entity" | "batch" | "other";
  result: AmbiguousWriteResult;
  /** How many attempts had an unknown outcome. */
  unknownOutcomes: number;
}

/**
 * Reported when the policy begins one wait without sending (`state: "started"`) and when that
 * wait is over (`"ended"`, with how long it lasted and how it ended): a backoff, an open
 * circuit's probe, a paced slot or the retry budget. Every sleep is told, a poll of a
 * half-open circuit as much as a backoff, so the waits of an operation add up to the time it
 * spent not sending; an operation that waits again, for the same reason or another, starts a
 * new wait. The local-wait gauge counts the waits begun and not yet over; the tracing observer
 * writes one span event per wait.
 */
export interface LocalWaitEvent {
  /** The operation's request. */
  request: PipelineRequest;
  /** What the request addresses, read once per operation (for the package's own observers). @internal */
  address: RequestAddress;
  /** Whether the wait begins or is over. */
  state: "started" | "ended";
  /** What it waits for: an open circuit, a paced slot, the retry budget, or a backoff before a retry. */
  reason: "circuit" | "pacing" | "budget" | "backoff";
  /** For a backoff: whether its length came from the strategy or the server's `Retry-After`; otherwise undefined. */
  source?: "backoff" | "retry-after";
  /** How long the policy meant to wait. */
  plannedInMs: number;
  /** For `ended`: how long it waited (less than planned when woken or let go early); undefined for `started`. */
  waitedInMs?: number;
  /**
   * For `ended`: `waited` (the whole wait), `woken` (what it waited for came early: its circuit
   * closed, its paced queue was let out), `released` (the caller policy let it go: the
   * operation stops), or `aborted` (by the caller's signal); undefined for `started`.
   */
  ended?: "waited" | "woken" | "released" | "aborted";
}

/**
 * The stop reasons of an operation that failed at once, or was let go in the middle of a
 * wait, for a local reason (its caller may not wait, or waiting would outlast its deadline),
 * with what it could not wait for: an open circuit, a paced queue, an empty retry budget, or
 * no spare slot for a bounded caller's backoff. The metrics count them from `onOperationEnd`.
 */
export const LOCAL_REFUSALS: Readonly<Partial<Record<StopReason, LocalWaitReason>>> = Object.freeze({
  "circuit-open": "circuit",
  "partition-busy": "pacing",
  "budget-exhausted": "budget",
  "caller-busy": "backoff",
});

/**
 * Typed hooks on the retry loop, used by the metrics and logging layers and open to users.
 * Observers must not throw; an observer that throws is logged and ignored. The policy reads
 * an observer's hooks once, when it is made (and calls them with the observer as `this`):
 * a hook added or replaced afterwards is not seen.
 */
export interface RetryObserver {
  onAttempt?(event: AttemptEvent): void;
  onRetry?(event: RetryEvent): void;
  onOperationEnd?(event: OperationEvent): void;
  /** Called before `onOperationEnd` when a write ended after an unknown outcome. */
  onAmbiguousWrite?(event: AmbiguousWriteEvent): void;
  /** Called when one wait without sending (a backoff, a circuit's, a paced slot's, the budget's) begins and when it is over. */
  onLocalWait?(event: LocalWaitEvent): void;
}
