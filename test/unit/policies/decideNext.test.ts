import { describe, expect, it } from "vitest";
import { decideNext, type DecisionInput } from "../../../src/policies/decideNext.js";

/** A retriable failure with retries and time left, and nothing else going on. */
const base: DecisionInput = {
  attemptClass: "throttled",
  retriesDone: 0,
  maxRetries: 3,
  remainingInMs: 10_000,
  backoffInMs: 800,
  retryAfterInMs: undefined,
  bodyReplayable: true,
  answerMayBeOurs: false,
  gateWaits: false,
  gateWaitInMs: 0,
};

describe("decideNext, as a table", () => {
  it.each<[string, Partial<DecisionInput>, ReturnType<typeof decideNext>]>([
    ["success stops", { attemptClass: "success" }, { action: "stop", reason: "success" }],
    ["aborted stops", { attemptClass: "aborted" }, { action: "stop", reason: "aborted" }],
    ["throttled retries after the backoff", {}, { action: "retry", delayInMs: 800, source: "backoff" }],
    ["transient retries", { attemptClass: "transient" }, { action: "retry", delayInMs: 800, source: "backoff" }],
    ["timeout retries", { attemptClass: "timeout" }, { action: "retry", delayInMs: 800, source: "backoff" }],
    ["a longer Retry-After wins", { retryAfterInMs: 2000 }, { action: "retry", delayInMs: 2000, source: "retry-after" }],
    ["a shorter Retry-After loses to the backoff", { retryAfterInMs: 100 }, { action: "retry", delayInMs: 800, source: "backoff" }],
    ["retries run out", { retriesDone: 3 }, { action: "stop", reason: "retries-exhausted" }],
    ["the wait would pass the deadline", { remainingInMs: 800 }, { action: "stop", reason: "deadline" }],
    ["a consumed stream body is not sent again", { bodyReplayable: false }, { action: "stop", reason: "body-not-replayable" }],
    ["permanent stops", { attemptClass: "permanent" }, { action: "stop", reason: "permanent" }],
    ["permanent that an unknown write may have caused reads back", { attemptClass: "permanent", answerMayBeOurs: true }, { action: "read-back" }],
    ["an open circuit in fail mode stops", { attemptClass: "circuit_open" }, { action: "stop", reason: "circuit-open" }],
    ["an open circuit in wait mode waits", { attemptClass: "circuit_open", gateWaits: true, gateWaitInMs: 1500 }, { action: "retry", delayInMs: 1500, source: "circuit" }],
    ["a circuit wait past the deadline stops", { attemptClass: "circuit_open", gateWaits: true, gateWaitInMs: 20_000 }, { action: "stop", reason: "circuit-open" }],
    ["a circuit wait spends no retry", { attemptClass: "circuit_open", gateWaits: true, gateWaitInMs: 10, retriesDone: 3 }, { action: "retry", delayInMs: 10, source: "circuit" }],
  ])("%s", (_name, change, expected) => {
    expect(decideNext({ ...base, ...change })).toEqual(expected);
  });
});
