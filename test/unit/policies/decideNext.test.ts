import { describe, expect, it } from "vitest";
import { decideNext, type Step, type StopStep, type WaitStep } from "../../../src/policies/decideNext.js";
import { newDecisionFacts, type DecisionFacts } from "../../../src/policies/decisionFacts.js";

/** A retriable failure with retries and time left, nothing refused, an open-loop caller. */
const afterFailure: DecisionFacts = {
  ...newDecisionFacts(),
  point: "attempt",
  retry: true,
  attemptClass: "throttled",
  maxRetries: 3,
  remainingInMs: 10_000,
  backoffInMs: 800,
  budget: "available",
};

/** Before the first attempt: the gate lets it go now, no budget needed. */
const atGate: DecisionFacts = { ...afterFailure, point: "gate", attemptClass: undefined, retry: false, budget: "free" };

/** A read whose secondary may be read (never read yet). */
const secondary: Partial<DecisionFacts> = { secondaryReadable: true };

const backOff = (delayInMs: number, source: "backoff" | "retry-after" = "backoff"): WaitStep => ({ action: "wait", on: "backoff", delayInMs, source });
const stop = (reason: string, more: Partial<StopStep> = {}): Step => ({ action: "stop", reason, ...more }) as Step;
/** A circuit refusal the operation waits on or stops at: recorded as an attempt (class circuit_open). */
const refusedWait = (delayInMs: number): WaitStep => ({ action: "wait", on: "circuit", delayInMs, refused: true });
const refusedStop: Step = stop("circuit-open", { answer: "refusal", refused: true });

describe("decideNext after an attempt, as a table", () => {
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["success stops", { attemptClass: "success" }, stop("success")],
    ["a write's 2xx whose body does not parse is settled (read back or marked), not sent again", { attemptClass: "success", answerUnreadable: true }, { action: "read-back" }],
    ["aborted stops", { attemptClass: "aborted" }, stop("aborted")],
    ["throttled backs off", {}, backOff(800)],
    ["transient backs off", { attemptClass: "transient" }, backOff(800)],
    ["timeout backs off", { attemptClass: "timeout" }, backOff(800)],
    ["a longer Retry-After wins", { retryAfterInMs: 2000 }, backOff(2000, "retry-after")],
    ["a shorter Retry-After loses to the backoff", { retryAfterInMs: 100 }, backOff(800)],
    ["retries run out", { retriesDone: 3 }, stop("retries-exhausted")],
    ["a failed probe waits for the next probe, and uses up no retry (even the last)", { wasProbe: true, retriesDone: 3 }, { action: "wait", on: "circuit", delayInMs: 10 }],
    ["a failed probe of a caller that may not wait backs off as any failure", { wasProbe: true, callerMayWait: false }, backOff(800)],
    ["the wait would pass the deadline", { remainingInMs: 800 }, stop("deadline")],
    ["a consumed stream body is not sent again", { bodyReplayable: false }, stop("body-not-replayable")],
    ["permanent stops", { attemptClass: "permanent" }, stop("permanent")],
    ["permanent that an unknown write may have caused reads back", { attemptClass: "permanent", answerMayBeOurs: true }, { action: "read-back" }],
    ["a read the secondary may serve goes there first, keeping the backoff in reserve", secondary, { action: "send", to: "secondary", reserveInMs: 800 }],
    ["a secondary read after a failure spends a retry of the budget", { ...secondary, hasBudget: true }, { action: "send", to: "secondary", reserveInMs: 800, spendsRetry: true }],
    ["the secondary is not read past the deadline", { ...secondary, remainingInMs: 500 }, stop("deadline")],
    ["the secondary is not read with the budget empty", { ...secondary, budget: "empty", budgetRetryAfterInMs: 300 }, backOff(800)],
    ["the secondary is not read with the budget empty, even for a paced primary", { ...secondary, budget: "empty", budgetRetryAfterInMs: 300, paced: true }, backOff(800)],
    ["the secondary is read once per failure of the primary", { ...secondary, secondaryReadSinceFailure: true }, backOff(800)],
    ["the secondary is not read again once it answered 404 (it lags: only the primary may say not found)", { ...secondary, secondaryAnswer: "not-found" }, backOff(800)],
    ["the secondary is not read again once it answered a permanent failure", { ...secondary, secondaryAnswer: "permanent" }, backOff(800)],
    ["the secondary is read again after a transient answer, at the primary's next failure", { ...secondary, secondaryAnswer: "transient" }, { action: "send", to: "secondary", reserveInMs: 800 }],
    ["an empty budget: an open loop backs off and defers at the gate", { budget: "empty", budgetRetryAfterInMs: 300 }, backOff(800)],
    ["an empty budget: a caller that may not wait stops now", { budget: "empty", budgetRetryAfterInMs: 300, callerMayWait: false }, stop("budget-exhausted")],
    ["an empty budget does not stop the retry of a paced partition (free: the gate paces it)", { budget: "empty", budgetRetryAfterInMs: 300, callerMayWait: false, paced: true }, backOff(800)],
    ["a failFast caller's backoff ends when its partition's circuit opens", { callerKind: "failFast" }, { ...backOff(800), untilRefused: true }],
    ["a bounded caller's long backoff may be let go, and ends when its circuit opens", { callerKind: "bounded" }, { ...backOff(800), untilRefused: true, releasable: true }],
    ["a bounded caller's backoff of 50 ms or less is never let go", { callerKind: "bounded", backoffInMs: 50 }, { ...backOff(50), untilRefused: true }],
    ["a bounded caller's failed probe waits for the next probe (10 ms: never let go)", { callerKind: "bounded", wasProbe: true }, { action: "wait", on: "circuit", delayInMs: 10 }],
    ["a bounded caller without a spare slot does not sleep a backoff", { callerMayBackOff: false }, stop("caller-busy")],
    ["a backoff of 50 ms or less is slept whatever the caller", { callerMayBackOff: false, backoffInMs: 50 }, backOff(50)],
    ["a circuit refusal recorded as the last class stops", { attemptClass: "circuit_open" }, stop("circuit-open")],
    ["nothing sent yet reads as aborted", { attemptClass: undefined }, stop("aborted")],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...afterFailure, ...change })).toEqual(expected);
  });
});

describe("decideNext before an attempt, as a table", () => {
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["the gate lets it go: send to the primary", {}, { action: "send", to: "primary" }],
    ["a wait for a paced scope's next send: wait for it", { gate: "wait-pacing", gateDelayInMs: 120 }, { action: "wait", on: "pacing", delayInMs: 120 }],
    ["a paced wait asked again and let go: send (its wait was spent)", { paced: true }, { action: "send", to: "primary" }],
    ["a bounded caller's paced wait may be let go", { gate: "wait-pacing", gateDelayInMs: 120, callerKind: "bounded" }, { action: "wait", on: "pacing", delayInMs: 120, releasable: true }],
    ["a paced wait of 50 ms or less is taken by a caller that may not wait", { gate: "wait-pacing", gateDelayInMs: 40, callerMayWait: false, callerKind: "bounded" }, { action: "wait", on: "pacing", delayInMs: 40 }],
    ["a retry the gate lets go unpaced spends a retry of the budget first", { retry: true, hasBudget: true }, { action: "take-retry" }],
    ["a retry with no budget configured: send", { retry: true }, { action: "send", to: "primary" }],
    ["a paced retry does not spend the budget (the gate paces it)", { retry: true, hasBudget: true, paced: true }, { action: "send", to: "primary" }],
    ["a first attempt spends no budget", { hasBudget: true }, { action: "send", to: "primary" }],
    ["a paced queue refusing a retry: partition busy with its last answer", { gate: "paced", gateDelayInMs: 7000, retry: true }, stop("partition-busy")],
    ["a paced queue past what the caller may wait: partition busy", { gate: "paced", gateDelayInMs: 7000 }, stop("partition-busy", { answer: "refusal" })],
    ["a scope that serves nothing: an open loop waits for its probe", { gate: "wait-circuit", gateDelayInMs: 1500 }, refusedWait(1500)],
    ["a circuit wait: its turn, whatever the draw (no spread: the scope's queue wakes it)", { gate: "wait-circuit", gateDelayInMs: 1000, jitter: 0.5 }, refusedWait(1000)],
    ["a circuit wait answering 0 is waited for 10 ms at least", { gate: "wait-circuit", gateDelayInMs: 0 }, refusedWait(10)],
    ["a circuit wait spends no retry", { gate: "wait-circuit", gateDelayInMs: 10, retriesDone: 3 }, refusedWait(10)],
    ["a bounded caller's circuit wait may be let go", { gate: "wait-circuit", gateDelayInMs: 1500, callerKind: "bounded" }, { ...refusedWait(1500), releasable: true }],
    ["a caller that may not wait stops at a circuit wait, however short", { gate: "wait-circuit", gateDelayInMs: 40, callerMayWait: false, callerKind: "bounded" }, refusedStop],
    ["a circuit wait: a read goes to the secondary", { gate: "wait-circuit", gateDelayInMs: 1500, ...secondary }, { action: "send", to: "secondary", reserveInMs: 0 }],
    ["a circuit wait: a retry is read from the secondary with a retry of the budget", { gate: "wait-circuit", gateDelayInMs: 1500, ...secondary, retry: true, hasBudget: true }, { action: "send", to: "secondary", reserveInMs: 0, spendsRetry: true }],
    ["a circuit wait: a retry is not read from the secondary with the budget empty", { gate: "wait-circuit", gateDelayInMs: 1500, ...secondary, retry: true, budget: "empty" }, refusedWait(1500)],
    ["a circuit wait: the secondary is read once per failure of the primary", { gate: "wait-circuit", gateDelayInMs: 1500, ...secondary, secondaryReadSinceFailure: true }, refusedWait(1500)],
    ["a circuit wait with no time left: no secondary read", { gate: "wait-circuit", gateDelayInMs: 10, ...secondary, remainingInMs: 0 }, refusedWait(10)],
    ["a circuit refusal (the next probe past what the caller may wait): our own error", { gate: "circuit-open", gateDelayInMs: 1500 }, refusedStop],
    ["a circuit refusal of a retry: stop with its last answer", { gate: "circuit-open", gateDelayInMs: 1500, retry: true }, stop("circuit-open", { refused: true })],
    ["a circuit refusal: a read goes to the secondary", { gate: "circuit-open", gateDelayInMs: 1500, ...secondary }, { action: "send", to: "secondary", reserveInMs: 0 }],
    ["a circuit refusal: a retry is read from the secondary with a retry of the budget", { gate: "circuit-open", gateDelayInMs: 1500, ...secondary, retry: true, hasBudget: true }, { action: "send", to: "secondary", reserveInMs: 0, spendsRetry: true }],
    ["a circuit refusal: a retry is not read from the secondary with the budget empty", { gate: "circuit-open", gateDelayInMs: 1500, ...secondary, retry: true, budget: "empty" }, stop("circuit-open", { refused: true })],
    ["a circuit refusal with no time left: no secondary read, stop", { gate: "circuit-open", gateDelayInMs: 1500, ...secondary, remainingInMs: 0 }, refusedStop],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...atGate, ...change })).toEqual(expected);
  });
});

describe("decideNext once the budget answered for a retry, as a table", () => {
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["a retry the budget grants: send", { budget: "available" }, { action: "send", to: "primary" }],
    ["an empty budget: an open loop waits for it (jittered, at most the poll)", { budget: "empty", budgetRetryAfterInMs: 900, jitter: 0.5 }, { action: "wait", on: "budget", delayInMs: 150 }],
    ["an empty budget about to refill: waits only that long", { budget: "empty", budgetRetryAfterInMs: 40 }, { action: "wait", on: "budget", delayInMs: 40 }],
    ["an empty budget: a caller that may not wait stops", { budget: "empty", budgetRetryAfterInMs: 900, callerMayWait: false }, stop("budget-exhausted")],
    ["an empty budget near the deadline is asked again within half the time left", { budget: "empty", budgetRetryAfterInMs: 900, remainingInMs: 50 }, { action: "wait", on: "budget", delayInMs: 25 }],
    ["an empty budget with a jittered wait past the deadline still waits, at most the time left", { budget: "empty", budgetRetryAfterInMs: 900, jitter: 0.99, remainingInMs: 15 }, { action: "wait", on: "budget", delayInMs: 10 }],
    ["an empty budget with 5 ms left waits them out, then asks once more", { budget: "empty", budgetRetryAfterInMs: 900, remainingInMs: 5 }, { action: "wait", on: "budget", delayInMs: 5 }],
    ["an empty budget with nothing left stops", { budget: "empty", budgetRetryAfterInMs: 900, remainingInMs: 0 }, stop("budget-exhausted")],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...atGate, point: "budget", retry: true, hasBudget: true, ...change })).toEqual(expected);
  });
});

describe("decideNext for a waiter the caller policy let go, as a table", () => {
  it.each<[string, DecisionFacts["waitReason"], Step]>([
    ["on a circuit: circuit open", "circuit", stop("circuit-open")],
    ["on a paced slot: partition busy", "pacing", stop("partition-busy")],
    ["on the budget: budget exhausted", "budget", stop("budget-exhausted")],
    ["in a backoff: caller busy", "backoff", stop("caller-busy")],
  ])("%s", (_name, waitReason, expected) => {
    expect(decideNext({ ...afterFailure, point: "ready", waitReason, letGo: true, mayKeepWaiting: false })).toEqual(expected);
  });
});

/** Ready to ask the gate: the operation's start. */
const ready: DecisionFacts = { ...newDecisionFacts(), point: "ready", remainingInMs: 10_000 };

describe("decideNext before asking the gate, as a table", () => {
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["the start: ask the gate, which may queue the attempt within the time left", {}, { action: "admit", queueForInMs: 10_000 }],
    ["a caller that may not wait: the gate may queue it only for a short wait", { callerMayWait: false }, { action: "admit", queueForInMs: 50 }],
    ["a caller that may not wait, near the deadline: at most the time left", { callerMayWait: false, remainingInMs: 20 }, { action: "admit", queueForInMs: 20 }],
    ["aborted: stop with the abort", { aborted: true }, stop("aborted", { answer: "abort" })],
    ["a wait waited out: ask the gate again", { waitReason: "backoff", retry: true }, { action: "admit", queueForInMs: 10_000 }],
    ["a waiter let go that may still wait (a backoff cut short by its circuit opening): ask the gate", { waitReason: "backoff", letGo: true, mayKeepWaiting: true, retry: true }, { action: "admit", queueForInMs: 10_000 }],
    ["a circuit waiter let go before any answer: our own error", { waitReason: "circuit", letGo: true, mayKeepWaiting: false }, stop("circuit-open", { answer: "refusal" })],
    ["a paced waiter let go before any answer: our own error", { waitReason: "pacing", letGo: true, mayKeepWaiting: false }, stop("partition-busy", { answer: "refusal" })],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...ready, ...change })).toEqual(expected);
  });
});

describe("decideNext after a secondary read, as a table", () => {
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["it answered: success", { secondaryAnswer: "success" }, stop("success")],
    ["it failed after a failed attempt: the primary's facts decide (backoff)", { secondaryAnswer: "transient", secondaryFrom: "attempt", secondaryReadSinceFailure: true }, backOff(800)],
    ["it failed after a refusal: ask the gate again", { secondaryAnswer: "transient", secondaryFrom: "gate" }, { action: "admit", queueForInMs: 10_000 }],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...afterFailure, ...secondary, point: "secondary", ...change })).toEqual(expected);
  });
});

describe("decideNext after a read-back, as a table", () => {
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["the store holds what was sent: success, with the read-back's answer", { attemptClass: "permanent", readBack: "applied" }, stop("success", { answer: "read-back" })],
    ["a 2xx whose body did not parse, not settled: the success it is", { attemptClass: "success", readBack: "unresolved" }, stop("success")],
    ["an error not settled: permanent", { attemptClass: "permanent", readBack: "differs" }, stop("permanent")],
    ["not a write a read-back can settle: permanent", { attemptClass: "permanent", readBack: "not_resolvable" }, stop("permanent")],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...afterFailure, point: "settled", ...change })).toEqual(expected);
  });
});

describe("decideNext for a write that had an unknown outcome: how it is reported when it stops, as a table", () => {
  const unknown: Partial<DecisionFacts> = { unknownOutcome: true };
  it.each<[string, Partial<DecisionFacts>, Step]>([
    ["a success is the service's word that it applied: no ambiguity", { ...unknown, attemptClass: "success" }, stop("success")],
    ["a failure leaves it unresolved", { ...unknown, attemptClass: "permanent" }, stop("permanent", { ambiguity: "unresolved" })],
    ["retries run out: unresolved", { ...unknown, retriesDone: 3 }, stop("retries-exhausted", { ambiguity: "unresolved" })],
    ["a $batch's success can hide a failed sub-request: not resolvable", { ...unknown, attemptClass: "success", batch: true }, stop("success", { ambiguity: "not_resolvable" })],
    ["a table created or deleted as asked is no ambiguity", { ...unknown, attemptClass: "permanent", tableAsAsked: true }, stop("permanent", { ambiguity: "as-asked" })],
    ["read back and found applied: applied, with the read-back's answer", { ...unknown, point: "settled", attemptClass: "permanent", readBack: "applied" }, stop("success", { answer: "read-back", ambiguity: "applied" })],
    ["read back and found different: differs", { ...unknown, point: "settled", attemptClass: "permanent", readBack: "differs" }, stop("permanent", { ambiguity: "differs" })],
    ["a 2xx whose body did not parse, not settled: the success it is, unresolved", { ...unknown, point: "settled", attemptClass: "success", readBack: "unresolved" }, stop("success", { ambiguity: "unresolved" })],
    ["no unknown outcome: nothing reported", { attemptClass: "permanent", batch: true }, stop("permanent")],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...afterFailure, ...change })).toEqual(expected);
  });
});
