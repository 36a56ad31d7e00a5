import { isRetriableClass } from "../classification/outcomeClass.js";
import type { AttemptClass, StopReason } from "../observers/retryEvents.js";
import type { LocalWaitReason } from "../observers/retryEvents.js";

/**
 * Every step the retry loop can take. The loop carries it out; {@link decideNext} chooses it.
 * `reserveInMs` of a send to the secondary is the primary's next wait, which the secondary's
 * attempt may not eat into.
 */
export type Step =
  | { readonly action: "send"; readonly to: "primary" }
  | { readonly action: "send"; readonly to: "secondary"; readonly reserveInMs: number }
  | { readonly action: "wait"; readonly on: "backoff"; readonly delayInMs: number; readonly source: "backoff" | "retry-after" }
  | { readonly action: "wait"; readonly on: Exclude<LocalWaitReason, "backoff">; readonly delayInMs: number }
  | { readonly action: "read-back" }
  | { readonly action: "stop"; readonly reason: StopReason };

/**
 * Where the loop stands when it asks: `gate` before an attempt (the budget and the gate have
 * answered), `attempt` after a primary attempt (or a failed secondary read after it) came
 * back, `released` when the caller policy let a waiter go in the middle of its wait.
 */
export type DecisionPoint = "gate" | "attempt" | "released";

/**
 * What the gate answered: send (after `gateDelayInMs` when paced), refused by an open circuit
 * (`gateDelayInMs` is when it admits a probe), refused while a half-open circuit's probe is out
 * (`gateDelayInMs` is only a poll: it may admit sooner), refused by pacing, or given back for the
 * budget (empty).
 */
export type GateAnswer = "send" | "circuit-open" | "probe-out" | "paced" | "not-asked";

/**
 * What the retry budget says about the next attempt: none needed (a first attempt, a paced retry,
 * no budget), a retry left (at the gate: spent for the primary send), none left.
 */
export type BudgetAnswer = "free" | "available" | "empty";

/** Every fact a decision needs; the loop fills them, {@link decideNext} reads them. */
export interface DecisionFacts {
  point: DecisionPoint;
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
  /** `send`: the paced slot's delay (0 when not paced, or already waited); a refusal: when to ask again. */
  gateDelayInMs: number;
  budget: BudgetAnswer;
  /** When `empty`: when the budget expects a retry to be free again. */
  budgetRetryAfterInMs: number;
  /** The caller policy: may this operation wait at a local refusal (circuit, pacing, budget) now? */
  callerMayWait: boolean;
  /** The caller policy: may it sleep a backoff now? */
  callerMayBackOff: boolean;
  /** A read may go to the secondary region now. */
  secondaryOpen: boolean;
  /** A uniform draw in [0, 1) that spreads circuit and budget waits (0 when neither is at hand). */
  jitter: number;
  /** For `released`: what the waiter was waiting for. */
  waitReason: LocalWaitReason | undefined;
}

/** Floor under a circuit wait, so a gate that answers 0 cannot make us spin. */
export const MIN_CIRCUIT_WAIT_IN_MS = 10;
/**
 * Polls while a half-open circuit's probe is out are drawn from [t, (1 + spread) t]. They are
 * only for a probe that fails: the gate wakes every waiter at once when one closes the circuit.
 */
export const CIRCUIT_WAIT_SPREAD = 1;
/** An empty budget is asked again within [t, 2t] of this (sooner than its window moves: successes refill it). */
export const BUDGET_POLL_IN_MS = 100;
/** A wait this short is taken whatever the caller policy says: it holds a worker no longer than an attempt does. */
export const SHORT_WAIT_IN_MS = 50;

/** The stop reason of a waiter let go, by what it waited for. */
const RELEASED: Readonly<Record<LocalWaitReason, StopReason>> = {
  circuit: "circuit-open",
  pacing: "partition-busy",
  budget: "budget-exhausted",
  backoff: "caller-busy",
};

const STOPS = new Map<StopReason, Step>();
/** A stop step, shared per reason. */
function stop(reason: StopReason): Step {
  let step = STOPS.get(reason);
  if (step === undefined) STOPS.set(reason, (step = Object.freeze({ action: "stop", reason })));
  return step;
}
/** The success path's step: a constant, not a lookup. */
const STOP_SUCCESS: Step = stop("success");
const SEND_PRIMARY: Step = Object.freeze({ action: "send", to: "primary" });
const READ_BACK: Step = Object.freeze({ action: "read-back" });

/**
 * The retry loop's every decision, as a pure function of the facts: no clock, no I/O, no
 * randomness (the draw is a fact). The table in test/unit/policies/decideNext.test.ts
 * covers every row.
 */
export function decideNext(f: DecisionFacts): Step {
  if (f.point === "released") return stop(RELEASED[f.waitReason ?? "circuit"]);
  return f.point === "gate" ? beforeAttempt(f) : afterAttempt(f);
}

/** The budget and the gate have answered for the next attempt. */
function beforeAttempt(f: DecisionFacts): Step {
  if (f.budget === "empty") {
    // Successes may refill the budget at any moment: with time left, it is asked again within it.
    if (!f.callerMayWait || f.remainingInMs <= 0) return stop("budget-exhausted");
    const wait = Math.min(f.budgetRetryAfterInMs, BUDGET_POLL_IN_MS) * (1 + f.jitter);
    return { action: "wait", on: "budget", delayInMs: askAgainIn(wait, f.remainingInMs) };
  }
  switch (f.gate) {
    case "send":
      return f.gateDelayInMs > 0 ? { action: "wait", on: "pacing", delayInMs: f.gateDelayInMs } : SEND_PRIMARY;
    case "paced":
      // The gate refuses a paced slot only when the queue outlasts what the caller may wait.
      return stop("partition-busy");
    case "circuit-open": {
      // An open circuit keeps reads off the primary, not off the secondary.
      if (f.secondaryOpen && f.remainingInMs > 0) return { action: "send", to: "secondary", reserveInMs: 0 };
      // Until the probe is due: the first waiter back takes it, and the rest are woken when it closes the circuit.
      const probeIn = Math.max(MIN_CIRCUIT_WAIT_IN_MS, f.gateDelayInMs);
      if (!f.callerMayWait || probeIn > f.remainingInMs) return stop("circuit-open");
      return { action: "wait", on: "circuit", delayInMs: probeIn };
    }
    case "probe-out": {
      if (f.secondaryOpen && f.remainingInMs > 0) return { action: "send", to: "secondary", reserveInMs: 0 };
      // The probe may answer any moment: with time left, the circuit is asked again within it.
      if (!f.callerMayWait || f.remainingInMs <= 0) return stop("circuit-open");
      const poll = Math.max(MIN_CIRCUIT_WAIT_IN_MS, f.gateDelayInMs) * (1 + CIRCUIT_WAIT_SPREAD * f.jitter);
      return { action: "wait", on: "circuit", delayInMs: askAgainIn(poll, f.remainingInMs) };
    }
    default:
      return stop("budget-exhausted");
  }
}

/**
 * A poll (`waitInMs`) for something that may come sooner than it (a probe's answer, the budget's
 * refill), cut to half the time left, so that what comes within the deadline is seen with time to
 * send; at least MIN_CIRCUIT_WAIT_IN_MS (at most what is left), so near the deadline it asks a few times, not a spin.
 */
function askAgainIn(waitInMs: number, remainingInMs: number): number {
  return Math.min(waitInMs, Math.max(MIN_CIRCUIT_WAIT_IN_MS, remainingInMs / 2), remainingInMs);
}

/** A primary attempt came back (or a secondary read after it failed). */
function afterAttempt(f: DecisionFacts): Step {
  const cls = f.attemptClass;
  // A write's 2xx is the service's word that it applied: an unreadable body is settled (read back where possible), not resent.
  if (cls === "success") return f.answerUnreadable ? READ_BACK : STOP_SUCCESS;
  if (cls === "aborted" || cls === undefined) return stop("aborted");
  if (cls === "circuit_open") return stop("circuit-open");
  if (!isRetriableClass(cls)) return f.answerMayBeOurs ? READ_BACK : stop("permanent");
  if (!f.bodyReplayable) return stop("body-not-replayable");
  // A failed probe says the partition is still out: its operation waits for the next probe, as any waiter on the
  // circuit does, and uses up no retry (volunteering for the probe every period would spend them all in one outage).
  if (f.wasProbe && f.callerMayWait) return { action: "wait", on: "circuit", delayInMs: MIN_CIRCUIT_WAIT_IN_MS };
  if (f.retriesDone >= f.maxRetries) return stop("retries-exhausted");
  const hint = f.retryAfterInMs;
  const fromHint = hint !== undefined && hint > f.backoffInMs;
  const delayInMs = fromHint ? hint : f.backoffInMs;
  const source = fromHint ? "retry-after" : "backoff";
  if (delayInMs >= f.remainingInMs) return stop("deadline");
  // A read the primary's partition failed may be served by the secondary before the backoff.
  if (f.secondaryOpen && f.budget !== "empty") return { action: "send", to: "secondary", reserveInMs: delayInMs };
  // An empty budget stops a caller that may not wait for it now rather than after the backoff.
  if (f.budget === "empty" && !f.callerMayWait) return stop("budget-exhausted");
  if (!f.callerMayBackOff && delayInMs > SHORT_WAIT_IN_MS) return stop("caller-busy");
  return { action: "wait", on: "backoff", delayInMs, source };
}

/** A facts object with every field set: the loop makes one per operation and refills it before each decision. */
export function newDecisionFacts(): DecisionFacts {
  return {
    point: "gate",
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
    budget: "free",
    budgetRetryAfterInMs: 0,
    callerMayWait: true,
    callerMayBackOff: true,
    secondaryOpen: false,
    jitter: 0,
    waitReason: undefined,
  };
}
