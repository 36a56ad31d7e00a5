import { describe, expect, it } from "vitest";
import { decideNext, newDecisionFacts, type DecisionFacts, type Step } from "../../../src/policies/decideNext.js";

/** A retriable failure with retries and time left, nothing refused, an open-loop caller. */
const afterFailure: DecisionFacts = {
  ...newDecisionFacts(),
  point: "attempt",
  attemptClass: "throttled",
  maxRetries: 3,
  remainingInMs: 10_000,
  backoffInMs: 800,
  budget: "available",
};

/** Before an attempt: the gate lets it go now, no budget needed. */
const atGate: DecisionFacts = { ...afterFailure, point: "gate", attemptClass: undefined, budget: "free" };

const backOff = (delayInMs: number, source: "backoff" | "retry-after" = "backoff"): Step => ({ action: "wait", on: "backoff", delayInMs, source });
const stop = (reason: string): Step => ({ action: "stop", reason } as Step);

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
    ["a read the secondary may serve goes there first, keeping the backoff in reserve", { secondaryOpen: true }, { action: "send", to: "secondary", reserveInMs: 800 }],
    ["the secondary is not read past the deadline", { secondaryOpen: true, remainingInMs: 500 }, stop("deadline")],
    ["the secondary is not read with the budget empty", { secondaryOpen: true, budget: "empty", budgetRetryAfterInMs: 300 }, backOff(800)],
    ["an empty budget: an open loop backs off and defers at the gate", { budget: "empty", budgetRetryAfterInMs: 300 }, backOff(800)],
    ["an empty budget: a caller that may not wait stops now", { budget: "empty", budgetRetryAfterInMs: 300, callerMayWait: false }, stop("budget-exhausted")],
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
    ["a paced slot: wait for it", { gateDelayInMs: 120 }, { action: "wait", on: "pacing", delayInMs: 120 }],
    ["a paced queue past what the caller may wait: partition busy", { gate: "paced", gateDelayInMs: 7000 }, stop("partition-busy")],
    ["an open circuit: an open loop waits for the probe", { gate: "circuit-open", gateDelayInMs: 1500 }, { action: "wait", on: "circuit", delayInMs: 1500 }],
    ["an open circuit: waits until the probe is due, whatever the draw (the rest are woken when it closes)", { gate: "circuit-open", gateDelayInMs: 1000, jitter: 0.5 }, { action: "wait", on: "circuit", delayInMs: 1000 }],
    ["an open circuit: the probe due just before the deadline is still waited for", { gate: "circuit-open", gateDelayInMs: 1000, jitter: 0.99, remainingInMs: 1000 }, { action: "wait", on: "circuit", delayInMs: 1000 }],
    ["an open circuit answering 0 is waited for 10 ms at least", { gate: "circuit-open", gateDelayInMs: 0 }, { action: "wait", on: "circuit", delayInMs: 10 }],
    ["an open circuit: a caller that may not wait stops", { gate: "circuit-open", gateDelayInMs: 1500, callerMayWait: false }, stop("circuit-open")],
    ["an open circuit: a probe past the deadline stops", { gate: "circuit-open", gateDelayInMs: 20_000 }, stop("circuit-open")],
    ["an open circuit: a circuit wait spends no retry", { gate: "circuit-open", gateDelayInMs: 10, retriesDone: 3 }, { action: "wait", on: "circuit", delayInMs: 10 }],
    ["an open circuit: a read goes to the secondary", { gate: "circuit-open", gateDelayInMs: 1500, secondaryOpen: true }, { action: "send", to: "secondary", reserveInMs: 0 }],
    ["an open circuit with no time left: no secondary read, stop", { gate: "circuit-open", gateDelayInMs: 1500, secondaryOpen: true, remainingInMs: 0 }, stop("circuit-open")],
    ["a retry the budget grants: send", { budget: "available" }, { action: "send", to: "primary" }],
    ["the gate not asked although the budget is not empty (cannot happen): nothing is sent", { gate: "not-asked" }, stop("budget-exhausted")],
    ["an empty budget: an open loop waits for it (jittered, at most the poll)", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 900, jitter: 0.5 }, { action: "wait", on: "budget", delayInMs: 150 }],
    ["an empty budget about to refill: waits only that long", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 40 }, { action: "wait", on: "budget", delayInMs: 40 }],
    ["an empty budget: a caller that may not wait stops", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 900, callerMayWait: false }, stop("budget-exhausted")],
    ["an empty budget near the deadline is asked again within half the time left", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 900, remainingInMs: 50 }, { action: "wait", on: "budget", delayInMs: 25 }],
    ["an empty budget with a jittered wait past the deadline still waits, at most the time left", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 900, jitter: 0.99, remainingInMs: 15 }, { action: "wait", on: "budget", delayInMs: 10 }],
    ["an empty budget with 5 ms left waits them out, then asks once more", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 900, remainingInMs: 5 }, { action: "wait", on: "budget", delayInMs: 5 }],
    ["an empty budget with nothing left stops", { budget: "empty", gate: "not-asked", budgetRetryAfterInMs: 900, remainingInMs: 0 }, stop("budget-exhausted")],
    ["a probe out: an open loop polls the circuit (spread by the draw)", { gate: "probe-out", gateDelayInMs: 300, jitter: 0.5 }, { action: "wait", on: "circuit", delayInMs: 450 }],
    ["a probe out, less time left than the poll: asks again within half the time left, not a stop", { gate: "probe-out", gateDelayInMs: 300, remainingInMs: 250 }, { action: "wait", on: "circuit", delayInMs: 125 }],
    ["a probe out, 8 ms left: waits them out, then asks once more", { gate: "probe-out", gateDelayInMs: 300, remainingInMs: 8 }, { action: "wait", on: "circuit", delayInMs: 8 }],
    ["a probe out with nothing left stops", { gate: "probe-out", gateDelayInMs: 300, remainingInMs: 0 }, stop("circuit-open")],
    ["a probe out: a caller that may not wait stops", { gate: "probe-out", gateDelayInMs: 300, callerMayWait: false }, stop("circuit-open")],
    ["a probe out: a read goes to the secondary", { gate: "probe-out", gateDelayInMs: 300, secondaryOpen: true }, { action: "send", to: "secondary", reserveInMs: 0 }],
    ["an open circuit whose probe time is past the deadline stops even when it is close", { gate: "circuit-open", gateDelayInMs: 300, remainingInMs: 250 }, stop("circuit-open")],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...atGate, ...change })).toEqual(expected);
  });
});

describe("decideNext for a waiter the caller policy let go, as a table", () => {
  it.each<[string, DecisionFacts["waitReason"], Step]>([
    ["on a circuit: circuit open", "circuit", stop("circuit-open")],
    ["on a paced slot: partition busy", "pacing", stop("partition-busy")],
    ["on the budget: budget exhausted", "budget", stop("budget-exhausted")],
    ["in a backoff: caller busy", "backoff", stop("caller-busy")],
  ])("%s", (_name, waitReason, expected) => {
    expect(decideNext({ ...afterFailure, point: "released", waitReason })).toEqual(expected);
  });
});
