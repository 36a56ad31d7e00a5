// What the retry loop knows when it decides: the facts its readers gather before each decision
// (one object per operation, refilled), and where it stands. decideNext.ts decides from them.
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { AttemptClass, LocalWaitReason } from "../observers/retryEvents.js";
import type { CallerSettings } from "./callerPolicy.js";

/**
 * Where the loop stands when it asks: `ready` to ask the gate (the operation's start, or a wait's
 * end), `gate` once it answered, `budget` once the budget answered for a retry, `attempt` after a
 * primary attempt, `secondary` after a secondary read, `settled` after a read-back.
 */
export type DecisionPoint = "ready" | "gate" | "budget" | "attempt" | "secondary" | "settled";

/**
 * What the gate answered: send now; wait `gateDelayInMs` (or until woken) for a probe of a scope
 * that serves nothing (`wait-circuit`) or for a paced scope's next send (`wait-pacing`); refused,
 * since the scope serves nothing until past what the caller may wait (`circuit-open`, `gateDelayInMs`
 * is when it probes again) or its queue is longer (`paced`).
 */
export type GateAnswer = "send" | "wait-circuit" | "wait-pacing" | "circuit-open" | "paced";

/** What the retry budget says: no budget to ask (none configured, or not a retry), a retry left, none left. */
export type BudgetAnswer = "free" | "available" | "empty";

/**
 * Every fact a decision needs, as the loop makes it once per operation, before any is read; its
 * readers refill it before each decision (changing nothing else), {@link decideNext} reads it.
 */
export function newDecisionFacts() {
  return {
    point: "ready" as DecisionPoint,
    /** The caller's signal aborted (`ready`). */
    aborted: false,
    /** The wait that has just ended (`ready`); undefined at the operation's start. */
    waitReason: undefined as LocalWaitReason | undefined,
    /** That wait was cut short by what the wait step allowed (`releasable`, `untilRefused`). */
    letGo: false,
    /** The caller policy: may that waiter go on waiting for what it waited for? */
    mayKeepWaiting: true,
    /** How the caller declared itself (`caller`): which waits may be cut short. */
    callerKind: "open" as CallerSettings["kind"],
    /** An attempt has been made: the next is a retry, and what the caller gets is its answer, not our own error. */
    retry: false,
    /** The last primary attempt's class; undefined before the first. */
    attemptClass: undefined as AttemptClass | undefined,
    /** Retries sent so far (0 after the first attempt). */
    retriesDone: 0,
    maxRetries: 0,
    /** Milliseconds left before the operation's deadline. */
    remainingInMs: 0,
    /** The strategy's wait before the next retry (already made safe to wait on). */
    backoffInMs: 0,
    /** The server's `Retry-After` hint, capped by `maxRetryAfterInMs`, when it sent one. */
    retryAfterInMs: undefined as number | undefined,
    /** Whether the request's body can be sent again. */
    bodyReplayable: true,
    /** The last attempt was a half-open circuit's probe (its failure is the circuit's, not a retry of the operation's). */
    wasProbe: false,
    /**
     * A write whose earlier attempt had an unknown outcome got the answer that attempt's
     * success would cause (409 after an insert, 404 after a delete), and read-back is on.
     */
    answerMayBeOurs: false,
    /**
     * The last attempt is a write's 2xx whose JSON body does not parse: applied, says the
     * service, but the caller's SDK cannot read the answer. Settled, never sent again.
     */
    answerUnreadable: false,
    gate: "send" as GateAnswer,
    /** A wait: how long (it may be woken sooner); a refusal: when to ask again. */
    gateDelayInMs: 0,
    /** The admission the next attempt goes on (`gate`), or the last went on (`attempt`), is paced. */
    paced: false,
    /** A retry budget is configured. */
    hasBudget: false,
    budget: "free" as BudgetAnswer,
    /** When `empty`: when the budget expects a retry to be free again. */
    budgetRetryAfterInMs: 0,
    /** The caller policy: may this operation wait at a local refusal (circuit, pacing, budget) now? */
    callerMayWait: true,
    /** The caller policy: may it sleep a backoff now? */
    callerMayBackOff: true,
    /** A read with a secondary region to read (`secondaryReads` on, a GET or HEAD that is not a dequeue). */
    secondaryReadable: false,
    /** The secondary's last answer (`not-found` for a 404); undefined before it was read. */
    secondaryAnswer: undefined as AttemptClass | "not-found" | undefined,
    /** The secondary was read after the primary's latest failure. */
    secondaryReadSinceFailure: false,
    /** Where the last secondary read was decided: after a refusal (`gate`) or after a failed attempt (`attempt`). */
    secondaryFrom: "gate" as "gate" | "attempt",
    /** A write of this operation had an attempt whose outcome is unknown: it may have applied. */
    unknownOutcome: false,
    /** With `unknownOutcome`: the last answer is a retried table create's 409 or delete's 404 (the table is as asked). */
    tableAsAsked: false,
    /** With `unknownOutcome`: the write is a Tables `$batch`. */
    batch: false,
    /** `settled`: what the read-back found. */
    readBack: undefined as AmbiguousWriteResult | undefined,
    /** A uniform draw in [0, 1) that spreads budget waits (0 when none is at hand). */
    jitter: 0,
  };
}

/** Every fact a decision needs (see {@link newDecisionFacts}). */
export type DecisionFacts = ReturnType<typeof newDecisionFacts>;
