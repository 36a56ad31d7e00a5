// What the retry loop knows when it decides: the facts its readers gather before each decision
// (one object per operation, refilled), and where it stands. decideNext.ts decides from them.
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { AttemptClass, LocalWaitReason } from "../observers/retryEvents.js";

/**
 * Where the loop stands when it asks: `ready` to ask the gate (the operation's start, or a wait's
 * end), `gate` once it answered, `budget` once the budget answered for a retry, `attempt` after a
 * primary attempt, `secondary` after a secondary read, `settled` after a read-back.
 */
export type DecisionPoint = "ready" | "gate" | "budget" | "attempt" | "secondary" | "settled";

/**
 * What the gate answered: send (after `gateDelayInMs` when paced), refused by an open circuit
 * (`gateDelayInMs` is when it admits a probe), refused while a half-open circuit's probe is out
 * (`gateDelayInMs` is only a poll: it may admit sooner), refused by pacing.
 */
export type GateAnswer = "send" | "circuit-open" | "probe-out" | "paced";

/** What the retry budget says: no budget to ask (none configured, or not a retry), a retry left, none left. */
export type BudgetAnswer = "free" | "available" | "empty";

/** Every fact a decision needs; the loop's readers fill them (changing nothing), {@link decideNext} reads them. */
export interface DecisionFacts {
  point: DecisionPoint;
  /** The caller's signal aborted (`ready`). */
  aborted: boolean;
  /** The wait that has just ended (`ready`); undefined at the operation's start. */
  waitReason: LocalWaitReason | undefined;
  /** That wait was cut short by what the wait step allowed (`releasable`, `untilRefused`). */
  letGo: boolean;
  /** The caller policy: may that waiter go on waiting for what it waited for? */
  mayKeepWaiting: boolean;
  /** How the caller declared itself (`caller`): which waits may be cut short. */
  callerKind: "open" | "failFast" | "bounded";
  /** An attempt has been made: the next is a retry, and what the caller gets is its answer, not our own error. */
  retry: boolean;
  /** The last primary attempt's class; undefined before the first. */
  attemptClass: AttemptClass | undefined;
  /** Retries sent so far (0 after the first attempt). */
  retriesDone: number;
  maxRetries: number;
  /** Milliseconds left before the operation's deadline. */
  remainingInMs: number;
  /** The strategy's wait before the next retry (already made safe to wait on). */
  backoffInMs: number;
  /** The server's `Retry-After` hint, capped by `maxRetryAfterInMs`, when it sent one. */
  retryAfterInMs: number | undefined;
  /** Whether the request's body can be sent again. */
  bodyReplayable: boolean;
  /** The last attempt was a half-open circuit's probe (its failure is the circuit's, not a retry of the operation's). */
  wasProbe: boolean;
  /**
   * A write whose earlier attempt had an unknown outcome got the answer that attempt's
   * success would cause (409 after an insert, 404 after a delete), and read-back is on.
   */
  answerMayBeOurs: boolean;
  /**
   * The last attempt is a write's 2xx whose JSON body does not parse: applied, says the
   * service, but the caller's SDK cannot read the answer. Settled, never sent again.
   */
  answerUnreadable: boolean;
  gate: GateAnswer;
  /** `send`: the paced slot's delay (0 when not paced); a refusal: when to ask again. */
  gateDelayInMs: number;
  /** `send` after a paced wait: the gate confirmed the slot (its answer is not the rest of the wait). */
  slotConfirmed: boolean;
  /** The admission the next attempt goes on (`gate`), or the last went on (`attempt`), is paced. */
  paced: boolean;
  /** A retry budget is configured. */
  hasBudget: boolean;
  budget: BudgetAnswer;
  /** When `empty`: when the budget expects a retry to be free again. */
  budgetRetryAfterInMs: number;
  /** The caller policy: may this operation wait at a local refusal (circuit, pacing, budget) now? */
  callerMayWait: boolean;
  /** The caller policy: may it sleep a backoff now? */
  callerMayBackOff: boolean;
  /** A read with a secondary region to read (`secondaryReads` on, a GET or HEAD that is not a dequeue). */
  secondaryReadable: boolean;
  /** The secondary's last answer (`not-found` for a 404); undefined before it was read. */
  secondaryAnswer: AttemptClass | "not-found" | undefined;
  /** The secondary was read after the primary's latest failure. */
  secondaryReadSinceFailure: boolean;
  /** Where the last secondary read was decided: after a refusal (`gate`) or after a failed attempt (`attempt`). */
  secondaryFrom: "gate" | "attempt";
  /** `settled`: what the read-back found. */
  readBack: AmbiguousWriteResult | undefined;
  /** A uniform draw in [0, 1) that spreads probe polls and budget waits (0 when neither is at hand). */
  jitter: number;
}

/** A facts object with every field set: the loop makes one per operation, and its readers refill it before each decision. */
export function newDecisionFacts(): DecisionFacts {
  return {
    point: "ready",
    aborted: false,
    waitReason: undefined,
    letGo: false,
    mayKeepWaiting: true,
    callerKind: "open",
    retry: false,
    attemptClass: undefined,
    retriesDone: 0,
    maxRetries: 0,
    remainingInMs: 0,
    backoffInMs: 0,
    retryAfterInMs: undefined,
    bodyReplayable: true,
    wasProbe: false,
    answerMayBeOurs: false,
    answerUnreadable: false,
    gate: "send",
    gateDelayInMs: 0,
    slotConfirmed: false,
    paced: false,
    hasBudget: false,
    budget: "free",
    budgetRetryAfterInMs: 0,
    callerMayWait: true,
    callerMayBackOff: true,
    secondaryReadable: false,
    secondaryAnswer: undefined,
    secondaryReadSinceFailure: false,
    secondaryFrom: "gate",
    readBack: undefined,
    jitter: 0,
  };
}
