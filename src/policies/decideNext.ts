import { isRetriableClass } from "../classification/outcomeClass.js";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import { LOCAL_REFUSALS, type LocalWaitReason, type StopReason } from "../observers/retryEvents.js";
import type { DecisionFacts } from "./decisionFacts.js";

/**
 * A wait, and what may cut it short besides its own wake (a circuit closing, a queue let out):
 * `releasable`, the caller policy may let it go (a bounded caller's wait longer than
 * SHORT_WAIT_IN_MS: healthy work needs the slot); `untilRefused`, a backoff of a caller that is
 * not an open loop ends when its partition's circuit opens (the gate would refuse the retry).
 * `refused`: the gate refused this attempt, and it is recorded as one (class `circuit_open`).
 */
export type WaitStep = (
  | { readonly action: "wait"; readonly on: "backoff"; readonly delayInMs: number; readonly source: "backoff" | "retry-after" }
  | { readonly action: "wait"; readonly on: Exclude<LocalWaitReason, "backoff">; readonly delayInMs: number }
) & { readonly releasable?: true; readonly untilRefused?: true; readonly refused?: true };

/**
 * The end, and what the caller gets: the last attempt's answer, unless `answer` says our own
 * refusal error (nothing was sent: `CircuitOpenError`, `PartitionBusyError`), the abort a wait
 * saw, or the read-back's answer. `refused` as in {@link WaitStep}. `ambiguity`: how a write
 * that had an unknown outcome is reported (`RetryInfo.ambiguousWrite`, `onAmbiguousWrite`);
 * `as-asked`, a table created or deleted as asked, is no ambiguity (only logged).
 */
export interface StopStep {
  readonly action: "stop";
  readonly reason: StopReason;
  readonly answer?: "refusal" | "abort" | "read-back";
  readonly refused?: true;
  readonly ambiguity?: AmbiguousWriteResult | "as-asked";
}

/**
 * Every step the retry loop can take. The loop carries it out; {@link decideNext} chooses it.
 * `admit` asks the gate, which may queue the attempt up to `queueForInMs`; `take-retry` spends a
 * retry of the budget. `reserveInMs` of a send to the secondary is the primary's next wait, which
 * the secondary's attempt may not eat into; `spendsRetry`, it spends a retry of the budget.
 */
export type Step =
  | { readonly action: "admit"; readonly queueForInMs: number }
  | { readonly action: "take-retry" }
  | { readonly action: "send"; readonly to: "primary" }
  | { readonly action: "send"; readonly to: "secondary"; readonly reserveInMs: number; readonly spendsRetry?: true }
  | WaitStep
  | { readonly action: "read-back" }
  | StopStep;

/** Floor under a circuit wait, so a gate that answers 0 cannot make us spin. */
export const MIN_CIRCUIT_WAIT_IN_MS = 10;
/** An empty budget is asked again within [t, 2t] of this (sooner than its window moves: successes refill it). */
export const BUDGET_POLL_IN_MS = 100;
/** A wait this short is taken whatever the caller policy says: it holds a worker no longer than an attempt does. */
export const SHORT_WAIT_IN_MS = 50;

/** The stop reason of a waiter let go, by what it waited for: the local refusals read backwards. */
const RELEASED = Object.fromEntries(Object.entries(LOCAL_REFUSALS).map(([stop, on]) => [on, stop])) as Record<LocalWaitReason, StopReason>;

const STOPS = new Map<string, StopStep>();
/** A stop step, shared per reason and variant. */
function stop(reason: StopReason, answer?: StopStep["answer"], refused?: true, ambiguity?: StopStep["ambiguity"]): StopStep {
  const key = `${reason}|${answer ?? ""}|${refused ?? ""}|${ambiguity ?? ""}`;
  let step = STOPS.get(key);
  if (step === undefined) {
    step = Object.freeze({ action: "stop", reason, ...(answer && { answer }), ...(refused && { refused }), ...(ambiguity && { ambiguity }) });
    STOPS.set(key, step);
  }
  return step;
}
/** The success path's steps: constants, not lookups. */
const STOP_SUCCESS = stop("success");
const SEND_PRIMARY: Step = Object.freeze({ action: "send", to: "primary" });
const TAKE_RETRY: Step = Object.freeze({ action: "take-retry" });
const READ_BACK: Step = Object.freeze({ action: "read-back" });

/**
 * The retry loop's every decision, as a pure function of the facts: no clock, no I/O, no
 * randomness (the draw is a fact). The table in test/unit/policies/decideNext.test.ts
 * covers every row.
 */
export function decideNext(f: DecisionFacts): Step {
  const step = decide(f);
  return f.unknownOutcome && step.action === "stop" ? withAmbiguity(step, f) : step;
}

function decide(f: DecisionFacts): Step {
  switch (f.point) {
    case "ready":
      return beforeGate(f);
    case "gate":
      return atGate(f);
    case "attempt":
      return afterAttempt(f);
    case "budget":
      return afterBudget(f);
    case "secondary":
      return afterSecondary(f);
    case "settled":
      return afterReadBack(f);
  }
}

/** The operation's start, or a wait's end: stop, or ask the gate. */
function beforeGate(f: DecisionFacts): Step {
  if (f.aborted) return stop("aborted", "abort");
  // A waiter let go stops, unless it may still wait (a backoff cut short by its circuit opening: the gate says what now).
  if (f.letGo && !f.mayKeepWaiting) return localStop(RELEASED[f.waitReason ?? "circuit"], f);
  // A caller that may not wait takes only a paced slot that is about to come (a circuit wait, it does not take).
  return { action: "admit", queueForInMs: f.callerMayWait ? f.remainingInMs : Math.min(f.remainingInMs, SHORT_WAIT_IN_MS) };
}

/** The gate has answered for the next attempt. */
function atGate(f: DecisionFacts): Step {
  switch (f.gate) {
    case "send":
      // A retry the gate does not pace is one the budget counts: spent as it goes (a paced one is not: the gate contract).
      return f.retry && f.hasBudget && !f.paced ? TAKE_RETRY : SEND_PRIMARY;
    case "wait-pacing":
      return waitFor("pacing", f.gateDelayInMs, f);
    case "wait-circuit":
      // A scope that serves nothing keeps reads off the primary, not off the secondary.
      if (mayReadSecondary(f) && f.remainingInMs > 0) return toSecondary(0, f);
      // However short, a circuit wait is no slot about to come: a caller that may not wait stops (it holds a worker
      // for the probe's answer, and a failed probe would keep it longer).
      if (!f.callerMayWait) return localStop("circuit-open", f, true);
      // Woken at its turn; the wait is recorded as an attempt refused by the circuit.
      return waitFor("circuit", Math.max(MIN_CIRCUIT_WAIT_IN_MS, f.gateDelayInMs), f, true);
    case "circuit-open":
      if (mayReadSecondary(f) && f.remainingInMs > 0) return toSecondary(0, f);
      return localStop("circuit-open", f, true);
    case "paced":
      // The gate refuses a paced slot only when the queue outlasts what the caller may wait.
      return localStop("partition-busy", f);
  }
}

/** The budget has answered for a retry the gate let go (refused, the gate's admission was given back). */
function afterBudget(f: DecisionFacts): Step {
  if (f.budget !== "empty") return SEND_PRIMARY;
  // Successes may refill the budget at any moment: with time left, it is asked again within it.
  if (!f.callerMayWait || f.remainingInMs <= 0) return stop("budget-exhausted");
  const wait = Math.min(f.budgetRetryAfterInMs, BUDGET_POLL_IN_MS) * (1 + f.jitter);
  return waitFor("budget", askAgainIn(wait, f.remainingInMs), f);
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
  if (f.wasProbe && f.callerMayWait) return waitFor("circuit", MIN_CIRCUIT_WAIT_IN_MS, f);
  if (f.retriesDone >= f.maxRetries) return stop("retries-exhausted");
  const hint = f.retryAfterInMs;
  const fromHint = hint !== undefined && hint > f.backoffInMs;
  const delayInMs = fromHint ? hint : f.backoffInMs;
  if (delayInMs >= f.remainingInMs) return stop("deadline");
  // A read the primary's partition failed may be served by the secondary before the backoff.
  if (mayReadSecondary(f)) return toSecondary(delayInMs, f);
  // An empty budget stops a caller that may not wait for it now rather than after the backoff (a paced retry is free).
  if (f.budget === "empty" && !f.paced && !f.callerMayWait) return stop("budget-exhausted");
  if (!f.callerMayBackOff && delayInMs > SHORT_WAIT_IN_MS) return stop("caller-busy");
  const step = waitFor("backoff", delayInMs, f) as { source: string };
  step.source = fromHint ? "retry-after" : "backoff";
  return step as Step;
}

/** A secondary read came back: its success ends the operation; its failure goes back to where the read was decided. */
function afterSecondary(f: DecisionFacts): Step {
  if (f.secondaryAnswer === "success") return STOP_SUCCESS;
  // Read after a refusal: the gate is asked again (it waits or stops as it says); after a failure: the primary's facts decide.
  return f.secondaryFrom === "gate" ? beforeGate(f) : afterAttempt(f);
}

/** The read-back of a write whose outcome was in doubt came back. */
function afterReadBack(f: DecisionFacts): Step {
  // The store holds what was sent: the write applied, and the caller gets the success the SDK would have got.
  if (f.readBack === "applied") return stop("success", "read-back");
  // Otherwise the last answer stands: a 2xx whose body did not parse ends as the success it is, an error as the failure it is.
  return f.attemptClass === "success" ? STOP_SUCCESS : stop("permanent");
}

/**
 * A write that had an unknown outcome ends reported as what settled it (docs/data-safety.md):
 * the read-back's result; else a table created or deleted as asked is no ambiguity (the SDK takes
 * its 409 or 404 as success, and a table holds nothing of its writer's to tell apart); a `$batch`
 * is `not_resolvable` (its HTTP success can hide a failed sub-request); any other success is the
 * service's word that it applied, and a failure leaves it `unresolved`.
 */
function withAmbiguity(step: StopStep, f: DecisionFacts): StopStep {
  const ambiguity = f.readBack ?? (f.tableAsAsked ? "as-asked" : f.batch ? "not_resolvable" : step.reason === "success" ? undefined : "unresolved");
  return ambiguity === undefined ? step : stop(step.reason, step.answer, step.refused, ambiguity);
}

/**
 * Whether a read may go to the secondary now: once per failure of the primary at most (an
 * operation waiting on an open circuit does not poll it), never again once it answered 404 (it
 * lags: its "not found" may be a write not replicated yet, and only the primary may say so, as
 * the storage SDKs do) or a permanent failure (no read access, a wrong endpoint), and as a retry
 * only with a retry of the budget (the gate does not pace it: a paced primary's retries are free,
 * the secondary's never are).
 */
function mayReadSecondary(f: DecisionFacts): boolean {
  if (!f.secondaryReadable || f.secondaryReadSinceFailure) return false;
  if (f.secondaryAnswer === "not-found" || f.secondaryAnswer === "permanent") return false;
  return !f.retry || f.budget !== "empty";
}

function toSecondary(reserveInMs: number, f: DecisionFacts): Step {
  return f.retry && f.hasBudget ? { action: "send", to: "secondary", reserveInMs, spendsRetry: true } : { action: "send", to: "secondary", reserveInMs };
}

/** A stop at a local refusal: our own error when no attempt's answer is in hand (CircuitOpenError, PartitionBusyError). */
function localStop(reason: StopReason, f: DecisionFacts, refused?: true): StopStep {
  const ours = !f.retry && (reason === "circuit-open" || reason === "partition-busy");
  return stop(reason, ours ? "refusal" : undefined, refused);
}

/**
 * A wait, with what may cut it short: an open loop's waits are one sleep; a backoff of any other
 * caller ends when its circuit opens; a bounded caller's wait longer than SHORT_WAIT_IN_MS may be
 * let go (never a shorter one: decideNext takes it whatever the caller policy says).
 */
function waitFor(on: LocalWaitReason, delayInMs: number, f: DecisionFacts, refused?: true): WaitStep {
  const step: { action: "wait"; on: LocalWaitReason; delayInMs: number; releasable?: true; untilRefused?: true; refused?: true } = { action: "wait", on, delayInMs };
  if (refused) step.refused = true;
  if (f.callerKind === "open") return step as WaitStep;
  if (on === "backoff") step.untilRefused = true;
  if (f.callerKind === "bounded" && delayInMs > SHORT_WAIT_IN_MS) step.releasable = true;
  return step as WaitStep;
}
