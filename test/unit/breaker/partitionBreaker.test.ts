import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../../../src/address/requestAddress.js";
import { ACCOUNT_PROBE_IN_MS, QUIET_IN_MS } from "../../../src/breaker/circuit.js";
import type { CircuitTransition } from "../../../src/breaker/circuitStateSource.js";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { openOwnCircuitThenThrottleAccount } from "../../support/throttleAccount.js";
import { DEFAULT_PARTITION_BREAKER_OPTIONS, type PartitionBreakerOptions } from "../../../src/breaker/partitionBreakerOptions.js";
import type { OutcomeClass } from "../../../src/classification/outcomeClass.js";
import { logger } from "../../../src/logging/logger.js";
import { SEND_NOW, type Admission, type SendAdmission } from "../../../src/breaker/attemptGate.js";
import type { AttemptResult } from "../../../src/classification/attemptResult.js";

const HOST = "https://acct.table.core.windows.net";
const key = (pk: string) => `table|acct|orders|${pk}`;
/** Failures this far apart open a circuit on the 5th: the partition has served nothing for 400 ms by then. */
const GAP_IN_MS = 100;
/** Admitted at once (a scope with a pacer adds its ticket). */
const SENT = { decision: "send", delayInMs: 0 };

function entityRequest(pk: string): PipelineRequest {
  return createPipelineRequest({ url: `${HOST}/orders(PartitionKey='${pk}',RowKey='r')`, method: "GET" });
}

const STATUS: Record<OutcomeClass, number | undefined> = {
  success: 200,
  throttled: 503,
  transient: 500,
  timeout: 504,
  permanent: 404,
  aborted: undefined,
};

function result(outcomeClass: OutcomeClass, status = STATUS[outcomeClass]): AttemptResult {
  return { outcomeClass, status };
}

/**
 * One attempt as the retry loop makes it: admit, and when admitted, record `outcome` (at
 * once: the answer's time is the clock's). Returns the admission.
 */
function attempt(breaker: PartitionBreaker, target: string | RequestAddress, outcome: OutcomeClass | AttemptResult, remainingInMs = Infinity): Admission {
  const address = typeof target === "string" ? readRequestAddress(entityRequest(target)) : target;
  const admission = breaker.admit(address, remainingInMs);
  if (admission.decision === "send") breaker.record(address, admission, typeof outcome === "string" ? result(outcome) : outcome);
  return admission;
}

/** `times` attempts for `pk` answering `outcome`, `gapInMs` apart (the first one now). */
function attempts(breaker: PartitionBreaker, pk: string, outcome: OutcomeClass, times: number, gapInMs = GAP_IN_MS): Admission[] {
  const admissions: Admission[] = [];
  for (let i = 0; i < times; i++) {
    if (i > 0) vi.advanceTimersByTime(gapInMs);
    admissions.push(attempt(breaker, pk, outcome));
  }
  return admissions;
}

/** Opens `pk`'s circuit: 5 rebalancing failures, 100 ms apart. */
/**
 * Follows the gate contract as the retry loop does: waits `admission.delayInMs`, asks again with
 * it, and waits the rest (a new admission with the same ticket) until the slot is confirmed.
 */
function whenSlotComes(breaker: PartitionBreaker, address: RequestAddress, admission: SendAdmission, send: (sent: SendAdmission) => void): void {
  if (admission.delayInMs === 0) {
    send(admission);
    return;
  }
  setTimeout(() => {
    const again = breaker.admit(address, Infinity, admission);
    if (again.decision !== "send") throw new Error(`refused at its slot: ${JSON.stringify(again)}`);
    if (again !== admission && again.delayInMs > 0 && again.ticket === admission.ticket) whenSlotComes(breaker, address, again, send);
    else send(again);
  }, admission.delayInMs);
}

function open(breaker: PartitionBreaker, pk: string): void {
  attempts(breaker, pk, "throttled", 5);
  expect(breaker.stateOf(key(pk))).toBe("open");
}

const breakers: PartitionBreaker[] = [];
function make(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const breaker = createPartitionBreaker(options);
  breakers.push(breaker);
  return breaker;
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.spyOn(logger, "warning").mockImplementation(() => undefined);
  vi.spyOn(logger, "info").mockImplementation(() => undefined);
});
afterEach(() => {
  for (const breaker of breakers.splice(0)) breaker.dispose();
  vi.useRealTimers();
});

describe("createPartitionBreaker: an offline partition", () => {
  it("by default opens on the 5th rebalancing failure in a row, once it has served nothing for 250 ms", () => {
    expect(DEFAULT_PARTITION_BREAKER_OPTIONS.consecutiveFailures).toBe(5);
    expect(QUIET_IN_MS).toBe(250);
    const breaker = make();
    attempts(breaker, "p1", "throttled", 4);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    attempts(breaker, "p1", "throttled", 1);
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(breaker.openScopes()).toEqual([key("p1")]);
  });

  it.each<OutcomeClass>(["throttled", "timeout", "transient"])("opens on %s answers", (cls) => {
    const breaker = make();
    attempts(breaker, "p1", cls, 5);
    expect(breaker.stateOf(key("p1"))).toBe("open");
  });

  it("consecutiveFailures sets how many", () => {
    const breaker = make({ consecutiveFailures: 2 });
    attempts(breaker, "p1", "throttled", 2, QUIET_IN_MS);
    expect(breaker.stateOf(key("p1"))).toBe("open");
  });

  it("once open, refuses with circuit-open, the scope and the time to the probe", () => {
    const breaker = make({ resetTimeoutInMs: 4000 });
    open(breaker, "p1");
    expect(breaker.admit(readRequestAddress(entityRequest("p1")), 60_000)).toEqual({
      decision: "refuse",
      reason: "circuit-open",
      scope: key("p1"),
      retryAfterInMs: 4000,
      probeOut: false,
      wake: expect.objectContaining({ listen: expect.any(Function) }),
    });
    vi.advanceTimersByTime(1000);
    expect(attempt(breaker, "p1", "success")).toMatchObject({ decision: "refuse", reason: "circuit-open", retryAfterInMs: 3000 });
  });

  it.each<[string, number]>([
    ["404", 404],
    ["409", 409],
    ["412", 412],
    ["400", 400],
  ])("a %s answer proves the partition answers: four failures and one of them, 60 times over, never open it", (_name, status) => {
    const breaker = make();
    const transitions: CircuitTransition[] = [];
    breaker.onTransition((t) => transitions.push(t));
    for (let round = 0; round < 60; round++) {
      attempts(breaker, "p1", "throttled", 4);
      vi.advanceTimersByTime(GAP_IN_MS);
      attempt(breaker, "p1", result("permanent", status));
      vi.advanceTimersByTime(GAP_IN_MS);
    }
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(transitions).toEqual([]);
  });

  it("aborted attempts never count as failures", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    attempts(breaker, "p1", "aborted", 100);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("probes go once per reset period whether or not the last answered: a partition that answers after its timeout is seen back at the next", () => {
    const breaker = make();
    open(breaker, "slow");
    vi.advanceTimersByTime(300);
    const slow = readRequestAddress(entityRequest("slow"));
    const first = breaker.admit(slow, Infinity);
    expect(first).toMatchObject({ decision: "send", probe: true });
    vi.advanceTimersByTime(299);
    expect(breaker.admit(slow, Infinity).decision).toBe("refuse"); // the probe is still out, for less than a reset period
    vi.advanceTimersByTime(1);
    const second = breaker.admit(slow, Infinity);
    expect(second).toMatchObject({ decision: "send", probe: true });
    breaker.record(slow, second as SendAdmission, result("success"));
    expect(breaker.stateOf(key("slow"))).toBe("closed");
  });

  it("a probe that fails after the next one went out does not reopen the circuit: the probe out now decides", () => {
    const breaker = make();
    open(breaker, "slow");
    const slow = readRequestAddress(entityRequest("slow"));
    vi.advanceTimersByTime(300);
    const first = breaker.admit(slow, Infinity) as SendAdmission;
    vi.advanceTimersByTime(300);
    const second = breaker.admit(slow, Infinity) as SendAdmission;
    expect(second).toMatchObject({ decision: "send", probe: true });
    breaker.record(slow, first, result("timeout")); // sent into the outage, answered after the service's timeout
    expect(breaker.stateOf(key("slow"))).toBe("half_open");
    breaker.record(slow, second, result("success"));
    expect(breaker.stateOf(key("slow"))).toBe("closed");
  });

  it("an attempt sent before the circuit opened that fails late does not reopen it while its probe is out", () => {
    const breaker = make();
    const slow = readRequestAddress(entityRequest("slow"));
    const straggler = breaker.admit(slow, Infinity) as SendAdmission; // sent while the partition still looked healthy
    open(breaker, "slow");
    vi.advanceTimersByTime(300);
    const probe = breaker.admit(slow, Infinity) as SendAdmission;
    expect(probe).toMatchObject({ decision: "send", probe: true });
    breaker.record(slow, straggler, result("timeout"));
    expect(breaker.stateOf(key("slow"))).toBe("half_open");
    breaker.record(slow, probe, result("success"));
    expect(breaker.stateOf(key("slow"))).toBe("closed");
  });

  it("scopes are independent: p1 open does not touch p2", () => {
    const breaker = make();
    open(breaker, "p1");
    attempt(breaker, "p2", "throttled");
    expect(attempt(breaker, "p2", "success")).toMatchObject(SENT);
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(breaker.stateOf(key("p2"))).toBe("closed");
    expect(breaker.stateCounts()).toEqual({ closed: 1, open: 1, half_open: 0 });
  });
});

describe("createPartitionBreaker: a hot partition", () => {
  it("a scripted alternation of successes and 503s never opens its circuit; the scope becomes paced", () => {
    const breaker = make();
    const transitions: CircuitTransition[] = [];
    breaker.onTransition((t) => transitions.push(t));
    const delays: number[] = [];
    let answered = 0;
    // 100 attempts/s offered for 5 s; each goes out when its slot comes, and the partition
    // answers every other one, in the order they reach it, with 503 ServerBusy.
    for (let i = 0; i < 500; i++) {
      vi.advanceTimersByTime(10);
      const address = readRequestAddress(entityRequest("hot"));
      const admission = breaker.admit(address, Infinity);
      if (admission.decision !== "send") throw new Error(`refused: ${JSON.stringify(admission)}`);
      delays.push(admission.delayInMs);
      whenSlotComes(breaker, address, admission, (sent) => breaker.record(address, sent, result(answered++ % 2 === 0 ? "success" : "throttled")));
    }
    // Cut after cut to the rate it served (half its answers are throttled, whatever the rate; at most one cut per
    // half second), so fewer than the 500 offered went out.
    expect(answered).toBeGreaterThan(50);
    expect(answered).toBeLessThan(400);
    expect(transitions).toEqual([]);
    expect(breaker.stateOf(key("hot"))).toBe("closed");
    const paced = breaker.pacedScopes();
    expect(paced).toEqual([{ scope: key("hot"), ratePerSecond: expect.any(Number) as number, level: "partition" }]);
    // Cut below what was offered, and never below minRatePerSecond.
    expect(paced[0]?.ratePerSecond).toBeLessThan(100);
    expect(paced[0]?.ratePerSecond).toBeGreaterThanOrEqual(1);
    // Unpaced until the first cut; then its attempts wait for their slots.
    expect(delays.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => 0));
    expect(delays.at(-1)).toBeGreaterThan(0);
  });

  it("refuses with paced, and reserves nothing, when the queue would outlast remainingInMs", () => {
    const breaker = make();
    // 100 attempts in 1 s (the first two throttled, which give the scope state and a pacer), then a throttle: it
    // served all but three of them, so the cut goes to the rate it served, about 100/s, never below.
    for (let i = 0; i < 100; i++) {
      attempt(breaker, "hot", i < 2 ? "throttled" : "success");
      vi.advanceTimersByTime(10);
    }
    attempt(breaker, "hot", "throttled");
    const [paced] = breaker.pacedScopes();
    expect(paced?.scope).toBe(key("hot"));
    expect(paced?.ratePerSecond).toBeGreaterThan(90);
    expect(paced?.ratePerSecond).toBeLessThan(105);
    const spacing = 1000 / paced!.ratePerSecond;
    const admissions = Array.from({ length: 12 }, () => breaker.admit(readRequestAddress(entityRequest("hot")), 100));
    const sent = admissions.filter((a) => a.decision === "send");
    // Slots 1000/rate ms apart, from now, as far as fits in the 100 ms left.
    const fit = Math.floor(100 / spacing) + 1;
    expect(sent).toHaveLength(fit);
    sent.forEach((a, i) => expect(a.decision === "send" && a.delayInMs).toBeCloseTo(i * spacing, 2));
    for (const refusal of admissions.slice(fit)) {
      expect(refusal).toMatchObject({ decision: "refuse", reason: "paced", scope: key("hot") });
      expect(refusal.decision === "refuse" && refusal.retryAfterInMs).toBeCloseTo(fit * spacing, 2);
    }
    // A caller with more time left takes the next slot: the refused ones took none.
    const patient = breaker.admit(readRequestAddress(entityRequest("hot")), 60_000);
    expect(patient.decision === "send" && patient.delayInMs).toBeCloseTo(fit * spacing, 2);
  });

  it("pacing: false never paces: throttled attempts are only counted for the circuit", () => {
    const breaker = make({ pacing: false });
    for (let i = 0; i < 500; i++) {
      vi.advanceTimersByTime(10);
      expect(attempt(breaker, "hot", i % 2 === 0 ? "success" : "throttled")).toEqual(SEND_NOW);
    }
    expect(breaker.pacedScopes()).toEqual([]);
    expect(breaker.stateOf(key("hot"))).toBe("closed");
    expect(breaker.size).toBe(1);
  });

  it("transient failures (500, resets) do not pace: they say nothing of the partition's rate", () => {
    const breaker = make();
    for (let i = 0; i < 500; i++) {
      vi.advanceTimersByTime(10);
      expect(attempt(breaker, "p", i % 2 === 0 ? "success" : "transient")).toEqual(SEND_NOW);
    }
    expect(breaker.pacedScopes()).toEqual([]);
  });
});

describe("createPartitionBreaker: state only where trouble is", () => {
  it("a scope with only successes and 404s holds no state, and no timer runs", () => {
    const breaker = make();
    attempts(breaker, "p1", "success", 50);
    attempts(breaker, "p2", "permanent", 50);
    expect(breaker.size).toBe(0);
    expect(breaker.stateOf(key("p1"))).toBeUndefined();
    expect(breaker.stateCounts()).toEqual({ closed: 0, open: 0, half_open: 0 });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the first rebalancing failure gives the scope a closed circuit that counts it", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    expect(breaker.size).toBe(1);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(breaker.stateCounts()).toEqual({ closed: 1, open: 0, half_open: 0 });
    vi.advanceTimersByTime(GAP_IN_MS);
    attempts(breaker, "p1", "throttled", 4);
    expect(breaker.stateOf(key("p1"))).toBe("open"); // the first failure counted: 5 in a row
  });

  it("while no scope has state, attempts do not even read their scope; then each operation's once", () => {
    const getScope = vi.fn((request: PipelineRequest) => (request.url.includes("'p2'") ? key("p2") : key("p1")));
    const breaker = make({ getScope });
    attempts(breaker, "p1", "success", 20);
    expect(getScope).not.toHaveBeenCalled();
    attempt(breaker, "p2", "throttled");
    expect(breaker.stateOf(key("p2"))).toBe("closed");
    expect(getScope).toHaveBeenCalledTimes(1);
    // With state somewhere, an attempt's scope is read, to find out whether it is that one: once per address.
    const address = readRequestAddress(entityRequest("p1"));
    for (let i = 0; i < 3; i++) attempt(breaker, address, "throttled");
    expect(getScope).toHaveBeenCalledTimes(2);
  });

  it("a closed circuit is retired by the sweep once it had no failure for rollingWindowInMs", () => {
    // Sweeps every 5 s (half the idle TTL); the scope is in use all along, so it is never idle.
    const breaker = make({ idleTtlInMs: 10_000, rollingWindowInMs: 3_000, pacing: false });
    attempt(breaker, "p1", "throttled"); // t = 0
    vi.advanceTimersByTime(3_000);
    attempt(breaker, "p1", "transient"); // t = 3 s: the window starts again
    for (let t = 3_000; t < 9_000; t += 1_000) {
      vi.advanceTimersByTime(1_000);
      attempt(breaker, "p1", "success");
    }
    expect(breaker.size).toBe(1); // the sweep at 5 s: 2 s since the failure
    vi.advanceTimersByTime(1_000); // the sweep at 10 s: 7 s since
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a paced scope is retired only after pacing.forgetAfterInMs without a throttled answer", () => {
    const breaker = make({ idleTtlInMs: 10_000, rollingWindowInMs: 1_000, pacing: { forgetAfterInMs: 7_000 } });
    for (let i = 0; i < 100; i++) {
      attempt(breaker, "hot", i % 2 ? "throttled" : "success");
      vi.advanceTimersByTime(10);
    }
    expect(breaker.pacedScopes()).toHaveLength(1);
    // The sweeps run 5 s and 10 s after the first throttle (at 10 ms); the last came at 990 ms.
    vi.advanceTimersByTime(4_100);
    // At 5 s: no failure for 4 s (> rollingWindowInMs), but a throttle less than 7 s ago: kept, still paced.
    expect(breaker.size).toBe(1);
    expect(breaker.pacedScopes()).toHaveLength(1);
    vi.advanceTimersByTime(5_000);
    // At 10 s: 9 s since the last throttle.
    expect(breaker.size).toBe(0);
    expect(breaker.pacedScopes()).toEqual([]);
    expect(attempt(breaker, "hot", "success")).toEqual(SEND_NOW);
  });

  it("a queue reserved while the scope served little is let out at the rate it regains (slow start), not the rate it was reserved at", () => {
    // Every answer throttled for a second (the account's whole partition at once; a circuit here needs 1,000 in a row):
    // it served nothing, so the cut is to 0.7 x what was sent, held until a success starts a doubling every 125 ms.
    const breaker = make({ consecutiveFailures: 1_000 });
    for (let i = 0; i < 100; i++) {
      attempt(breaker, "hot", "throttled");
      vi.advanceTimersByTime(10);
    }
    const address = readRequestAddress(entityRequest("hot"));
    const start = Date.now();
    const sentAt: number[] = [];
    let firstDelay = -1;
    for (let i = 0; i < 200; i++) {
      const admission = breaker.admit(address, Infinity);
      if (admission.decision !== "send") throw new Error(`refused: ${JSON.stringify(admission)}`);
      if (i === 199) firstDelay = admission.delayInMs;
      whenSlotComes(breaker, address, admission, (sent) => {
        sentAt.push(Date.now() - start);
        breaker.record(address, sent, result("success"));
      });
    }
    const queuedInMs = breaker.statusOf(key("hot")).retryAfterInMs;
    expect(queuedInMs).toBeGreaterThan(2_000); // 200 slots at the cut rate
    expect(firstDelay).toBe(500); // a long wait is handed out in slices of PACED_RECHECK_IN_MS
    vi.advanceTimersByTime(queuedInMs + 1_000);
    expect(sentAt).toHaveLength(200);
    // Sent in order, and the last of them long before the slot it was given.
    expect(sentAt).toEqual([...sentAt].sort((a, b) => a - b));
    expect(Math.max(...sentAt)).toBeLessThan(queuedInMs / 2);
  });

  it("a half-open circuit's probe goes at once, not behind its partition's paced queue", () => {
    const breaker = make();
    for (let i = 0; i < 100; i++) {
      attempt(breaker, "hot", i % 2 ? "throttled" : "success");
      vi.advanceTimersByTime(10);
    }
    const address = readRequestAddress(entityRequest("hot"));
    for (let i = 0; i < 300; i++) breaker.admit(address, Infinity);
    const queuedInMs = breaker.statusOf(key("hot")).retryAfterInMs;
    expect(queuedInMs).toBeGreaterThan(DEFAULT_PARTITION_BREAKER_OPTIONS.resetTimeoutInMs + 1_000);
    // Then the partition stops serving: five throttles in a row open its circuit, with seconds of slots still queued.
    attempts(breaker, "hot", "throttled", 5);
    expect(breaker.stateOf(key("hot"))).toBe("open");
    vi.advanceTimersByTime(DEFAULT_PARTITION_BREAKER_OPTIONS.resetTimeoutInMs);
    const probe = breaker.admit(address, Infinity);
    expect(probe).toMatchObject({ decision: "send", delayInMs: 0 });
    expect(breaker.stateOf(key("hot"))).toBe("half_open");
  });

  it("a queued slot of a scope calm for pacing.forgetAfterInMs comes at once", () => {
    const breaker = make({ idleTtlInMs: 100_000, rollingWindowInMs: 1_000, pacing: { forgetAfterInMs: 2_000 } });
    for (let i = 0; i < 200; i++) {
      attempt(breaker, "hot", i % 2 ? "throttled" : "success");
      vi.advanceTimersByTime(10);
    }
    const address = readRequestAddress(entityRequest("hot"));
    let last: Admission = SEND_NOW;
    for (let i = 0; i < 400; i++) last = breaker.admit(address, Infinity);
    if (last.decision !== "send") throw new Error("refused");
    // The last slot is seconds off (400 at the rate served), asked about every half second.
    expect(breaker.statusOf(key("hot")).retryAfterInMs).toBeGreaterThan(3_000);
    vi.advanceTimersByTime(1_000);
    const rest = breaker.admit(address, Infinity, last);
    expect(rest).not.toBe(last);
    expect(rest).toMatchObject({ decision: "send", delayInMs: 500, ticket: last.ticket });
    // Calm for forgetAfterInMs since the last throttle: the slot has come.
    vi.advanceTimersByTime(1_000);
    expect(breaker.admit(address, Infinity, rest as SendAdmission)).toBe(rest);
  });

  it("a scope calm for pacing.forgetAfterInMs is no longer paced, even before the sweep retires it", () => {
    // A sweep only every 50 s: the scope outlives forgetAfterInMs by far.
    const breaker = make({ idleTtlInMs: 100_000, rollingWindowInMs: 1_000, pacing: { forgetAfterInMs: 2_000 } });
    for (let i = 0; i < 200; i++) attempt(breaker, "hot", i % 2 ? "throttled" : "success");
    const paced = attempt(breaker, "hot", "success");
    expect(paced.decision === "send" && paced.paced).toBe(true); // throttled at once: slots queue up
    vi.advanceTimersByTime(2_500);
    expect(breaker.size).toBe(1); // not swept yet
    expect(breaker.statusOf(key("hot")).state).toBe("healthy");
    // What statusOf says is what admit does: the attempt goes out unpaced.
    expect(attempt(breaker, "hot", "success")).toEqual(SEND_NOW);
    expect(breaker.pacedScopes()).toEqual([]);
  });

  it("an open circuit is not retired, however long since its last failure", () => {
    const breaker = make({ idleTtlInMs: 1_000_000, rollingWindowInMs: 1_000, resetTimeoutInMs: 60_000 });
    open(breaker, "p1");
    vi.advanceTimersByTime(50_000);
    expect(breaker.size).toBe(1);
    expect(breaker.stateOf(key("p1"))).toBe("open");
  });
});

describe("createPartitionBreaker: half-open", () => {
  function opened(options: PartitionBreakerOptions = {}) {
    const breaker = make({ resetTimeoutInMs: 3000, ...options });
    const transitions: CircuitTransition[] = [];
    breaker.onTransition((t) => transitions.push(t));
    open(breaker, "p1");
    return { breaker, transitions };
  }

  it("goes half-open once the reset period passes, without an admit; retryAfterInMs counts down to it", () => {
    const { breaker, transitions } = opened();
    vi.advanceTimersByTime(2999);
    expect(breaker.stateCounts()).toEqual({ closed: 0, open: 1, half_open: 0 });
    expect(attempt(breaker, "p1", "success")).toMatchObject({ decision: "refuse", retryAfterInMs: 1 });
    vi.advanceTimersByTime(1);
    expect(breaker.stateCounts()).toEqual({ closed: 0, open: 0, half_open: 1 });
    expect(breaker.halfOpenScopes()).toEqual([key("p1")]);
    expect(breaker.openScopes()).toEqual([]);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
    expect(breaker.statusOf(key("p1"))).toMatchObject({ state: "half_open", available: true });
    // Queries change nothing and tell nobody: the half-open is announced when an attempt meets it.
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(["closed>open"]);
    attempt(breaker, "p1", "throttled");
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(["closed>open", "open>half_open", "half_open>open"]);
  });

  it("announces open → half-open once, when the probe is admitted (the queries before it announce nothing), and nothing more", () => {
    const { breaker, transitions } = opened();
    vi.advanceTimersByTime(3000);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
    expect(breaker.stateCounts()).toEqual({ closed: 0, open: 0, half_open: 1 });
    expect(breaker.halfOpenScopes()).toEqual([key("p1")]);
    expect(attempt(breaker, "p1", "success")).toMatchObject(SENT);
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(["closed>open", "open>half_open", "half_open>closed"]);
  });

  it("refusesNow and statusOf answer as admit would, and change nothing", () => {
    const { breaker } = opened();
    const address = readRequestAddress(entityRequest("p1"));
    vi.advanceTimersByTime(2999);
    expect(breaker.refusesNow?.(address)).toBe(true);
    expect(breaker.statusOf(key("p1"))).toEqual({ state: "open", available: false, retryAfterInMs: 1 });
    vi.advanceTimersByTime(1);
    for (let i = 0; i < 2; i++) {
      expect(breaker.refusesNow?.(address)).toBe(false);
      expect(breaker.statusOf(key("p1"))).toEqual({ state: "half_open", available: true, retryAfterInMs: 0 });
    }
    expect(breaker.admit(address, 60_000)).toMatchObject(SENT); // the probe, never reported
    expect(breaker.refusesNow?.(address)).toBe(true);
    // The poll while a probe is out is a reset period: its waiters are woken when it closes the circuit.
    expect(breaker.statusOf(key("p1"))).toEqual({ state: "half_open", available: false, retryAfterInMs: 3000 });
    vi.advanceTimersByTime(3000);
    expect(breaker.refusesNow?.(address)).toBe(false);
    expect(breaker.statusOf(key("p1"))).toEqual({ state: "half_open", available: true, retryAfterInMs: 0 });
    expect(breaker.admit(address, 60_000)).toMatchObject(SENT);
  });

  it("a successful probe closes it", () => {
    const { breaker, transitions } = opened();
    vi.advanceTimersByTime(3000);
    expect(attempt(breaker, "p1", "success")).toMatchObject(SENT);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(transitions.map((t) => `${t.from}>${t.to}`)).toEqual(["closed>open", "open>half_open", "half_open>closed"]);
    expect(transitions[0]).toEqual({ service: "table", scope: key("p1"), from: "closed", to: "open" });
    expect(breaker.stateCounts()).toEqual({ closed: 1, open: 0, half_open: 0 });
  });

  it("a 404 probe closes it too: the partition answers", () => {
    const { breaker } = opened();
    vi.advanceTimersByTime(3000);
    attempt(breaker, "p1", "permanent");
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it.each<OutcomeClass>(["throttled", "timeout", "transient", "aborted"])("a %s probe reopens it for another full period", (cls) => {
    const { breaker, transitions } = opened();
    vi.advanceTimersByTime(3000);
    expect(attempt(breaker, "p1", cls).decision).toBe("send");
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(transitions.at(-1)).toMatchObject({ from: "half_open", to: "open" });
    expect(attempt(breaker, "p1", "success")).toMatchObject({ decision: "refuse", retryAfterInMs: 3000 });
    vi.advanceTimersByTime(3000);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
  });

  it("lets exactly one probe through; the others are refused until its answer, and woken by it", () => {
    const { breaker } = opened();
    vi.advanceTimersByTime(3000);
    const address = readRequestAddress(entityRequest("p1"));
    const probe = breaker.admit(address, 60_000);
    expect(probe).toMatchObject(SENT);
    let woken = 0;
    for (let i = 0; i < 5; i++) {
      const refusal = breaker.admit(readRequestAddress(entityRequest("p1")), 60_000);
      expect(refusal).toEqual({
        decision: "refuse",
        reason: "circuit-open",
        scope: key("p1"),
        retryAfterInMs: 3000,
        probeOut: true,
        wake: expect.objectContaining({ listen: expect.any(Function) }),
      });
      if (refusal.decision === "refuse") refusal.wake?.listen(() => woken++);
    }
    expect(woken).toBe(0);
    if (probe.decision === "send") breaker.record(address, probe, result("success"));
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(woken).toBe(5); // every waiter at once, as the probe closes it
    expect(attempt(breaker, "p1", "success")).toMatchObject(SENT);
  });

  it("a probe admitted but never recorded (its operation ended first) does not hold the circuit half-open for ever", () => {
    const { breaker } = opened();
    vi.advanceTimersByTime(3000);
    expect(breaker.admit(readRequestAddress(entityRequest("p1")), 60_000).decision).toBe("send"); // never sent
    vi.advanceTimersByTime(2999);
    expect(breaker.admit(readRequestAddress(entityRequest("p1")), 60_000).decision).toBe("refuse");
    vi.advanceTimersByTime(1);
    expect(attempt(breaker, "p1", "success")).toMatchObject(SENT);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });
});

describe("createPartitionBreaker: scopes", () => {
  it("requests without a scope bypass the breaker", () => {
    const breaker = make();
    const address = readRequestAddress(createPipelineRequest({ url: "https://example.com/whatever", method: "GET" }));
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(GAP_IN_MS);
      expect(attempt(breaker, address, "throttled")).toEqual(SEND_NOW);
    }
    expect(breaker.size).toBe(0);
  });

  it("scopes Azurite path-style URLs with the breaker's service when the address has none", () => {
    const breaker = make({ service: "blob" });
    const transitions: CircuitTransition[] = [];
    breaker.onTransition((t) => transitions.push(t));
    // A blob URL on Azurite's IP and port names no service: the policy (made without one) could not scope it.
    const azurite = () => readRequestAddress(createPipelineRequest({ url: "http://127.0.0.1:10000/devstoreaccount1/photos/cat.jpg", method: "GET" }));
    expect(azurite().scopeKey).toBeUndefined();
    for (let i = 0; i < 5; i++) {
      vi.advanceTimersByTime(GAP_IN_MS);
      attempt(breaker, azurite(), "throttled");
    }
    expect(breaker.stateOf("blob|devstoreaccount1|photos|cat.jpg")).toBe("open");
    expect(transitions[0]).toMatchObject({ service: "blob", scope: "blob|devstoreaccount1|photos|cat.jpg" });
  });

  it("scopes by the address the policy read, with its service", () => {
    const breaker = make();
    const request = createPipelineRequest({ url: "http://127.0.0.1:10000/devstoreaccount1/photos/cat.jpg", method: "GET" });
    attempt(breaker, readRequestAddress(request, "blob"), "throttled");
    expect(breaker.stateOf("blob|devstoreaccount1|photos|cat.jpg")).toBe("closed");
  });

  it("scopes an insert by the PartitionKey in its body", () => {
    const breaker = make();
    const request = createPipelineRequest({ url: `${HOST}/orders`, method: "POST", body: JSON.stringify({ PartitionKey: "b1", RowKey: "r" }) });
    attempt(breaker, readRequestAddress(request), "throttled");
    expect(breaker.stateOf(key("b1"))).toBe("closed");
  });

  it("a user getScope overrides; undefined or a throw bypasses", () => {
    const getScope = (r: PipelineRequest): string | undefined => {
      if (r.url.includes("'boom'")) throw new Error("getScope bug");
      return r.url.includes("'mine'") ? "my-scope" : undefined;
    };
    const breaker = make({ getScope });
    for (const pk of ["mine", "other", "boom"]) attempt(breaker, pk, "throttled");
    expect(breaker.size).toBe(1);
    expect(breaker.stateOf("my-scope")).toBe("closed");
  });
});

describe("createPartitionBreaker: bounded state", () => {
  it("keeps at most maxScopes, forgetting the least recently used", () => {
    const breaker = make({ maxScopes: 3 });
    for (const pk of ["a", "b", "c"]) attempt(breaker, pk, "throttled");
    attempt(breaker, "a", "success"); // admitted: a is now the most recent
    attempt(breaker, "d", "throttled");
    expect(breaker.size).toBe(3);
    expect(breaker.stateOf(key("b"))).toBeUndefined();
    expect(breaker.stateOf(key("a"))).toBe("closed");
    for (const pk of ["e", "f", "g", "h"]) attempt(breaker, pk, "throttled");
    expect(breaker.size).toBe(3);
    expect([key("f"), key("g"), key("h")].map((k) => breaker.stateOf(k))).toEqual(["closed", "closed", "closed"]);
  });

  it("a forgotten open circuit leaves the open list and the counts", () => {
    const breaker = make({ maxScopes: 2 });
    open(breaker, "a");
    attempt(breaker, "ok", "success"); // the account serves: b's and c's failures are their own, not its outage's
    attempt(breaker, "b", "throttled");
    attempt(breaker, "c", "throttled");
    expect(breaker.openScopes()).toEqual([]);
    expect(breaker.stateCounts()).toEqual({ closed: 2, open: 0, half_open: 0 });
  });

  it("forgets scopes idle for idleTtlInMs, even open ones", () => {
    // Long reset period: "busy" stays open (never retirable) and is asked about every 4 s.
    const breaker = make({ idleTtlInMs: 10_000, resetTimeoutInMs: 60_000 });
    open(breaker, "idle");
    attempt(breaker, "ok", "success"); // the account serves: "busy" opens on its own failures, with the configured reset
    open(breaker, "busy");
    for (let t = 0; t < 4; t++) {
      vi.advanceTimersByTime(4_000);
      expect(attempt(breaker, "busy", "success").decision).toBe("refuse");
    }
    vi.advanceTimersByTime(5_000);
    expect(breaker.stateOf(key("idle"))).toBeUndefined();
    expect(breaker.stateOf(key("busy"))).toBe("open");
    expect(breaker.stateCounts()).toEqual({ closed: 0, open: 1, half_open: 0 });
  });

  it("holds one timer for thousands of scopes, and none once empty or disposed", () => {
    const breaker = make({ idleTtlInMs: 1_000 });
    expect(vi.getTimerCount()).toBe(0);
    for (let i = 0; i < 2_000; i++) attempt(breaker, `k${i}`, "throttled");
    expect(breaker.size).toBe(2_000);
    expect(vi.getTimerCount()).toBe(1); // the idle sweep
    vi.advanceTimersByTime(4_000);
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    attempt(breaker, "again", "throttled");
    expect(vi.getTimerCount()).toBe(1);
    breaker.dispose();
    expect(vi.getTimerCount()).toBe(0);
  });

  it("idleTtlInMs Infinity: no sweep timer, bounded by maxScopes alone", () => {
    const breaker = make({ idleTtlInMs: Infinity, maxScopes: 10 });
    for (let i = 0; i < 50; i++) attempt(breaker, `k${i}`, "throttled");
    expect(vi.getTimerCount()).toBe(0);
    expect(breaker.size).toBe(10);
  });

  it("dispose forgets every scope, stops the timer, lets later attempts straight through; idempotent", () => {
    const breaker = make();
    const seen: string[] = [];
    breaker.onTransition((t) => seen.push(t.to));
    open(breaker, "p1");
    attempt(breaker, "p2", "throttled");
    expect(vi.getTimerCount()).toBe(1);
    breaker.dispose();
    breaker.dispose();
    expect(breaker.size).toBe(0);
    expect(breaker.openScopes()).toEqual([]);
    expect(breaker.pacedScopes()).toEqual([]);
    expect(breaker.stateCounts()).toEqual({ closed: 0, open: 0, half_open: 0 });
    expect(vi.getTimerCount()).toBe(0);
    expect(attempts(breaker, "p1", "throttled", 10)).toEqual(Array.from({ length: 10 }, () => SEND_NOW));
    expect(breaker.size).toBe(0);
    expect(seen).toEqual(["open"]);
  });
});

describe("createPartitionBreaker: events, logging", () => {
  it("refuses the removed mode option with a TypeError naming mode (circuitBreaker.mode through installResilience) and the caller option that replaces it", () => {
    for (const mode of ["fail", "wait", "auto", undefined]) {
      expect(() => make({ mode } as never)).toThrow(TypeError);
      expect(() => make({ mode } as never)).toThrow(/^mode was removed.*caller: \{ failFast: true \}.*caller: \{ concurrency: N \}/);
    }
  });

  it("logs the opening and the closing at warning, each probe's round (half-open, a failed probe) at info, with the scope key", () => {
    const warning = vi.mocked(logger.warning);
    const info = vi.mocked(logger.info);
    const breaker = make({ resetTimeoutInMs: 300 });
    open(breaker, "p1");
    vi.advanceTimersByTime(300);
    attempt(breaker, "p1", "throttled");
    vi.advanceTimersByTime(300);
    attempt(breaker, "p1", "success");
    const warnings = warning.mock.calls.map((c) => String(c[0]));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/opened \(the partition served nothing/);
    expect(warnings[1]).toMatch(/closed/);
    const infos = info.mock.calls.map((c) => String(c[0])).filter((line) => line.startsWith("Circuit"));
    expect(infos).toHaveLength(3);
    expect(infos[0]).toMatch(/half-open/);
    expect(infos[1]).toMatch(/opened \(the probe failed\)/);
    expect(infos[2]).toMatch(/half-open/);
    for (const line of [...warnings, ...infos]) expect(line).toContain(`"${key("p1")}"`);
  });

  it("a throwing transition listener is ignored; unsubscribe stops delivery", () => {
    const breaker = make();
    const seen: string[] = [];
    breaker.onTransition(() => {
      throw new Error("listener bug");
    });
    const off = breaker.onTransition((t) => seen.push(t.to));
    open(breaker, "p1");
    off();
    vi.advanceTimersByTime(3000);
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
    expect(seen).toEqual(["open"]);
  });

  it("onTransition needs a function", () => {
    expect(() => make().onTransition(null as never)).toThrow(TypeError);
  });
});

describe("createPartitionBreaker: options", () => {
  it.each<[string, unknown, typeof TypeError | typeof RangeError, RegExp]>([
    ["mode", "sometimes", TypeError, /^mode was removed/],
    ["mode", null, TypeError, /^mode was removed/],
    ["service", "files", TypeError, /service must be one of/],
    ["service", null, TypeError, /service must be one of .*; got null/],
    ["getScope", "key", TypeError, /getScope must be a function/],
    ["getScope", null, TypeError, /getScope must be a function/],
    ["resetTimeoutInMs", 0, RangeError, /resetTimeoutInMs must be between 1 and .*; got 0/],
    ["resetTimeoutInMs", "3000", TypeError, /resetTimeoutInMs must be a number; got "3000"/],
    ["resetTimeoutInMs", null, TypeError, /resetTimeoutInMs must be a number; got null/],
    ["consecutiveFailures", 0, RangeError, /consecutiveFailures must be between 1/],
    ["consecutiveFailures", 2.5, RangeError, /consecutiveFailures must be an integer; got 2.5/],
    ["consecutiveFailures", "5", TypeError, /consecutiveFailures must be a number; got "5"/],
    ["rollingWindowInMs", 0, RangeError, /rollingWindowInMs must be between 1/],
    ["maxScopes", 0, RangeError, /maxScopes must be between 1/],
    ["maxScopes", Infinity, RangeError, /maxScopes must be a finite number/],
    ["idleTtlInMs", Number.NaN, TypeError, /idleTtlInMs must be a number; got NaN/],
    ["pacing", null, TypeError, /^pacing must be false or an options object; got null/],
    ["pacing", true, TypeError, /^pacing must be false or an options object; got true/],
    ["pacing", { decreaseFactor: 1.5 }, RangeError, /^pacing\.decreaseFactor must be between 0\.01 and 0\.99; got 1\.5/],
    ["pacing", { minRatePerSecond: null }, TypeError, /^pacing\.minRatePerSecond must be a number; got null/],
    ["pacing", { forgetAfterInMs: -1 }, RangeError, /^pacing\.forgetAfterInMs must be between 1/],
    ["pacing", { rate: 5 }, TypeError, /^pacing\.rate is not a known option/],
  ])("rejects %s = %j, naming it", (name, value, type, message) => {
    const build = () => createPartitionBreaker({ [name]: value } as PartitionBreakerOptions);
    expect(build).toThrow(type);
    expect(build).toThrow(message);
  });

  it.each(["errorThresholdPercentage", "volumeThreshold"])("rejects the removed option %s as unknown", (name) => {
    expect(() => createPartitionBreaker({ [name]: 50 } as PartitionBreakerOptions)).toThrow(new RegExp(`^${name} is not a known option`));
  });

  it("rejects unknown keys and non-objects, null included", () => {
    expect(() => createPartitionBreaker({ resetTimeout: 5 } as PartitionBreakerOptions)).toThrow(/^resetTimeout is not a known option/);
    expect(() => createPartitionBreaker(null as unknown as PartitionBreakerOptions)).toThrow(TypeError);
    expect(() => createPartitionBreaker(null as unknown as PartitionBreakerOptions)).toThrow(/got null/);
  });

  it("accepts consecutiveFailures Infinity: an offline partition is then never refused", () => {
    const breaker = make({ consecutiveFailures: Infinity });
    const admissions = attempts(breaker, "p1", "throttled", 100);
    expect(admissions.every((a) => a.decision === "send")).toBe(true);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });
});

describe("createPartitionBreaker: the account pacer", () => {
  const ACCOUNT = "table|acct";
  const accountEntries = (breaker: PartitionBreaker) => breaker.pacedScopes().filter((p) => p.level === "account");

  it("does not engage on many partitions each throttled once, even when their throttles outnumber the successes (a table being split)", () => {
    const breaker = make();
    for (let i = 0; i < 2_000; i++) {
      attempt(breaker, `p${i}`, "throttled");
      if (i % 3 === 0) attempt(breaker, `p${i}`, "success");
      vi.advanceTimersByTime(1);
    }
    expect(accountEntries(breaker)).toEqual([]);
    // A partition never seen before goes out at once: nothing paces the account.
    expect(attempt(breaker, "fresh", "success")).toEqual(SEND_NOW);
  });

  it("engages on repeated throttles of 3 partitions outnumbering the successes, shows in pacedScopes, and spaces every partition's attempts", () => {
    const breaker = make({ consecutiveFailures: 1_000 });
    // Ten partitions, each throttled again and again for a second (the account throttling as a whole), 200 attempts/s.
    for (let i = 0; i < 400; i++) {
      attempt(breaker, `p${i % 10}`, "throttled");
      vi.advanceTimersByTime(5);
    }
    const [account] = accountEntries(breaker);
    expect(account).toMatchObject({ scope: ACCOUNT, level: "account" });
    expect(account!.ratePerSecond).toBeLessThan(200);
    // A partition with no trouble of its own waits for the account's slots.
    const fresh = Array.from({ length: 5 }, () => breaker.admit(readRequestAddress(entityRequest("fresh")), Infinity));
    expect(fresh.every((a) => a.decision === "send")).toBe(true);
    const last = fresh.at(-1);
    expect(last?.decision === "send" ? last.delayInMs : -1).toBeGreaterThan(0);
  });

  it("repeats from fewer than 3 partitions (a few hot keys) do not engage it", () => {
    const breaker = make({ consecutiveFailures: 1_000 });
    for (let i = 0; i < 400; i++) {
      attempt(breaker, `hot${i % 2}`, "throttled");
      vi.advanceTimersByTime(5);
    }
    expect(accountEntries(breaker)).toEqual([]);
  });

  it("after the throttle ends, the account's rate climbs back within about a second of the first success", () => {
    const breaker = make({ consecutiveFailures: 1_000 });
    for (let i = 0; i < 600; i++) {
      attempt(breaker, `p${i % 10}`, "throttled");
      vi.advanceTimersByTime(5);
    }
    const during = accountEntries(breaker)[0]!.ratePerSecond;
    // Served again: the answers succeed, as fast as the account lets them go.
    for (let t = 0; t < 1_000; t += 5) {
      attempt(breaker, `p${(t / 5) % 10}`, "success");
      vi.advanceTimersByTime(5);
    }
    const after = accountEntries(breaker)[0]?.ratePerSecond ?? Infinity;
    expect(after).toBeGreaterThan(50 * during);
    expect(after).toBeGreaterThan(200);
  });
});

describe("createPartitionBreaker: the end of an outage", () => {
  const accountEntries = (breaker: PartitionBreaker) => breaker.pacedScopes().filter((p) => p.level === "account");
  it("the account's queue, spaced while it served nothing, is let out at its first success: waiters woken, slots come, newcomers unpaced", () => {
    const breaker = make({ consecutiveFailures: 1_000 });
    for (let i = 0; i < 300; i++) {
      attempt(breaker, `p${i % 10}`, "throttled");
      vi.advanceTimersByTime(5);
    }
    expect(accountEntries(breaker)).toHaveLength(1);
    const fresh = readRequestAddress(entityRequest("fresh"));
    const queued: SendAdmission[] = [];
    let woken = 0;
    for (let i = 0; i < 50; i++) {
      const admission = breaker.admit(fresh, 60_000);
      if (admission.decision !== "send") throw new Error("refused");
      admission.wake?.listen(() => woken++);
      queued.push(admission);
    }
    const last = queued.at(-1) as SendAdmission;
    expect(last.delayInMs).toBeGreaterThan(0);
    expect(breaker.admit(fresh, 60_000, last)).not.toBe(last); // still ahead: the rest of the wait
    attempt(breaker, "p3", "success");
    expect(woken).toBe(queued.filter((a) => a.delayInMs > 0).length); // every one that waits, at once
    expect(breaker.admit(fresh, 60_000, last)).toBe(last); // its slot has come
    expect(accountEntries(breaker)).toEqual([]);
    expect(breaker.admit(fresh, 60_000)).toMatchObject({ decision: "send", delayInMs: 0 });
  });

  it("a backoff's wake source fires when the partition's circuit opens (the retry waits for the probe) and when it closes on a probe's success", () => {
    const breaker = make({ resetTimeoutInMs: 300 });
    const address = readRequestAddress(entityRequest("p1"));
    attempts(breaker, "p1", "throttled", 4);
    let woken = 0;
    const listen = () => breaker.wakeOf(address)?.listen(() => woken++);
    listen();
    vi.advanceTimersByTime(GAP_IN_MS);
    attempt(breaker, "p1", "throttled"); // the fifth in a row: opens it
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(woken).toBe(1);
    listen();
    vi.advanceTimersByTime(300);
    expect(woken).toBe(1); // half-open by time: nothing to wake for, the probe is due to whoever asks
    expect(attempt(breaker, "p1", "throttled").decision).toBe("send"); // a failed probe: open again
    expect(woken).toBe(2);
    listen();
    vi.advanceTimersByTime(300);
    expect(attempt(breaker, "p1", "success").decision).toBe("send");
    expect(woken).toBe(3);
    expect(breaker.wakeOf(readRequestAddress(entityRequest("never-failed")))).toBeUndefined();
  });
});

describe("createPartitionBreaker: circuits opened by the account's throttle as a whole", () => {
  const address = (pk: string) => readRequestAddress(entityRequest(pk));
  /** Ten partitions throttled in turn, 200 attempts/s, until every circuit is open: the account throttling as a whole. */
  function throttleAccount(breaker: PartitionBreaker): void {
    for (let i = 0; breaker.openScopes().length < 10; i++) {
      expect(i).toBeLessThan(400);
      attempt(breaker, `p${i % 10}`, "throttled");
      vi.advanceTimersByTime(5);
    }
    expect(breaker.pacedScopes().some((p) => p.level === "account")).toBe(true);
  }

  it("reopen for a probe after ACCOUNT_PROBE_IN_MS, not resetTimeoutInMs (the account is over its target, no partition is moving)", () => {
    expect(ACCOUNT_PROBE_IN_MS).toBe(100);
    const breaker = make();
    throttleAccount(breaker);
    const status = breaker.statusOf(key("p9"));
    expect(status.state).toBe("open");
    expect(status.retryAfterInMs).toBeLessThanOrEqual(ACCOUNT_PROBE_IN_MS);
    vi.advanceTimersByTime(ACCOUNT_PROBE_IN_MS);
    expect(breaker.halfOpenScopes()).toHaveLength(10);
  });

  it("a smaller resetTimeoutInMs is kept", () => {
    const breaker = make({ resetTimeoutInMs: 200 });
    throttleAccount(breaker);
    expect(breaker.statusOf(key("p9")).retryAfterInMs).toBeLessThanOrEqual(200);
  });

  it("all close at the account's first success, whichever partition answers it", () => {
    const breaker = make();
    throttleAccount(breaker);
    vi.advanceTimersByTime(2_000);
    const admission = attempt(breaker, "p3", "success");
    expect(admission.decision).toBe("send");
    expect(breaker.openScopes()).toEqual([]);
    expect(breaker.halfOpenScopes()).toEqual([]);
    expect(breaker.stateOf(key("p7"))).toBe("closed");
  });

  it("a partition's own outage is not closed by another partition's success", () => {
    const breaker = make();
    open(breaker, "moving");
    attempt(breaker, "other", "success");
    expect(breaker.stateOf(key("moving"))).toBe("open");
  });

  it("a held circuit's probe is not paced by the account (its rate is the account's probe period): sent at once behind a long account queue", () => {
    const breaker = make();
    throttleAccount(breaker);
    vi.advanceTimersByTime(ACCOUNT_PROBE_IN_MS);
    for (let i = 0; i < 50; i++) breaker.admit(address("fresh"), 60_000); // the account's queue, at its throttled rate
    expect(breaker.admit(address("fresh"), 60_000)).toMatchObject({ decision: "send", paced: true });
    const probes = Array.from({ length: 10 }, (_, i) => breaker.admit(address(`p${i}`), Infinity)).filter((a) => a.decision === "send");
    expect(probes).toHaveLength(1);
    expect(probes[0]).toMatchObject({ delayInMs: 0, probe: true });
  });

  it("a partition's own circuit in a paced account: its probe, paced by the account, is sent when it comes back for its slot, not refused as a probe already out", () => {
    const breaker = make();
    openOwnCircuitThenThrottleAccount(breaker, address("p0"), ["p1", "p2", "p3"].map(address));
    vi.advanceTimersByTime(2_000);
    const probe = breaker.admit(address("p0"), Infinity);
    expect(probe).toMatchObject({ decision: "send", paced: true });
    if (probe.decision !== "send") return;
    vi.advanceTimersByTime(probe.delayInMs);
    // Any other attempt to p0 waits for the probe's answer.
    expect(breaker.admit(address("p0"), Infinity)).toMatchObject({ decision: "refuse", reason: "circuit-open" });
    expect(breaker.admit(address("p0"), Infinity, probe)).toBe(probe);
  });

  it("a partition's own circuit in a paced account: a probe whose account slot is further than the half-open poll is turned back, the circuit left half-open for the next one", () => {
    const breaker = make();
    openOwnCircuitThenThrottleAccount(breaker, address("p0"), ["p1", "p2", "p3"].map(address));
    vi.advanceTimersByTime(2_000);
    // A partition with no circuit fills the account's queue, at its throttled rate, until its next slot is
    // over a second away (a paced wait is handed out in slices, so the refusal of a caller with 1 s left tells).
    let queued = 0;
    for (; queued < 10_000; queued++) {
      if (breaker.admit(address("fresh"), 1_000).decision === "refuse") break;
    }
    expect(queued).toBeLessThan(10_000);
    const refusal = breaker.admit(address("p0"), Infinity);
    expect(refusal).toMatchObject({ decision: "refuse", reason: "circuit-open" });
    expect(refusal.decision === "refuse" ? refusal.retryAfterInMs : -1).toBeLessThanOrEqual(DEFAULT_PARTITION_BREAKER_OPTIONS.resetTimeoutInMs);
    // No probe is out: the circuit is half-open and would take one.
    expect(breaker.stateOf(key("p0"))).toBe("half_open");
    expect(breaker.statusOf(key("p0")).available).toBe(true);
  });
});

describe("createPartitionBreaker: a partition's first throttle", () => {
  it("gets it no pacer (a table being split: each new range is hot once); a second one within forgetAfterInMs does", () => {
    const breaker = make();
    attempt(breaker, "split", "throttled");
    for (let i = 0; i < 20; i++) {
      vi.advanceTimersByTime(50);
      expect(attempt(breaker, "split", "success")).toEqual(SEND_NOW);
    }
    attempt(breaker, "split", "throttled");
    // The pacer is there now: admissions carry its ticket (paced), though it has not cut yet.
    expect(attempt(breaker, "split", "success")).toMatchObject({ decision: "send", paced: true });
  });

  it("is where the pacer's rate starts from: a partition serving nothing is cut at its second throttle, on what it was sent since the first", () => {
    // A partition timing out (answers come 1.5 s late): attempts keep going out before its answers come back.
    const breaker = make();
    const target = readRequestAddress(entityRequest("slow"));
    const admitNow = (): Admission => breaker.admit(target, Infinity);
    const first = admitNow();
    for (let i = 0; i < 6; i++) {
      vi.advanceTimersByTime(100);
      expect(admitNow()).toEqual(SEND_NOW);
    }
    // The first attempt's timeout comes back: the partition's first throttle, no pacer yet.
    if (first.decision !== "send") throw new Error("the first attempt was refused");
    breaker.record(target, first, result("timeout"));
    for (let i = 0; i < 6; i++) {
      vi.advanceTimersByTime(100);
      expect(admitNow()).toEqual(SEND_NOW);
    }
    // The second timeout makes the pacer, which cuts at once: 6 sent in the 600 ms since the first, none served.
    breaker.record(target, SEND_NOW, result("timeout"));
    expect(breaker.pacedScopes()).toEqual([expect.objectContaining({ scope: key("slow") })]);
    const rate = breaker.pacedScopes()[0]?.ratePerSecond ?? 0;
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(10);
    const next = [admitNow(), admitNow()];
    expect(next[1]).toMatchObject({ decision: "send", paced: true });
    expect(next[1]?.decision === "send" ? next[1].delayInMs : 0).toBeGreaterThanOrEqual(Math.floor(1000 / rate));
  });
});


describe("createPartitionBreaker: an account out as a whole (its endpoint refusing, frozen or resetting)", () => {
  const address = (pk: string) => readRequestAddress(entityRequest(pk));
  const refused: AttemptResult = { outcomeClass: "transient", error: Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }) };
  /** Ten partitions failing in turn, 200 attempts/s, nothing served anywhere, until every circuit is open. */
  function endpointOut(breaker: PartitionBreaker): void {
    for (let i = 0; breaker.openScopes().length + breaker.halfOpenScopes().length < 10; i++) {
      expect(i).toBeLessThan(400);
      attempt(breaker, `p${i % 10}`, refused);
      vi.advanceTimersByTime(5);
    }
  }

  const reset: AttemptResult = { outcomeClass: "transient", error: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) };
  /** `times` attempts answering `outcome`, `gapInMs` apart, from `partitions` in turn. */
  function failInTurn(breaker: PartitionBreaker, partitions: readonly string[], outcome: AttemptResult, times: number, gapInMs: number): void {
    for (let i = 0; i < times; i++) {
      attempt(breaker, partitions[i % partitions.length] as string, outcome);
      vi.advanceTimersByTime(gapInMs);
    }
  }

  it("its circuits take one probe per ACCOUNT_PROBE_IN_MS between them, and the first success anywhere closes them all", () => {
    const breaker = make({ pacing: false });
    endpointOut(breaker);
    vi.advanceTimersByTime(ACCOUNT_PROBE_IN_MS);
    // Every circuit is due a probe by its own clock; the account lets one go.
    const asked = Array.from({ length: 10 }, (_, i) => breaker.admit(address(`p${i}`), Infinity));
    expect(asked.filter((a) => a.decision === "send")).toHaveLength(1);
    const probe = asked.find((a) => a.decision === "send") as SendAdmission;
    expect(probe.probe).toBe(true);
    const prober = asked.indexOf(probe);
    breaker.record(address(`p${prober}`), probe, result("success"));
    expect(breaker.openScopes()).toEqual([]);
    expect(breaker.halfOpenScopes()).toEqual([]);
  });

  it("a failed probe keeps them held: the next probe, from any of them, comes ACCOUNT_PROBE_IN_MS later", () => {
    const breaker = make({ pacing: false });
    endpointOut(breaker);
    let probes = 0;
    for (let t = 0; t < 1_000; t += 10) {
      for (let i = 0; i < 10; i++) {
        const admission = breaker.admit(address(`p${i}`), Infinity);
        if (admission.decision !== "send") continue;
        probes += 1;
        breaker.record(address(`p${i}`), admission, refused);
      }
      vi.advanceTimersByTime(10);
    }
    // One a tenth of a second for the whole account, not one per partition.
    expect(probes).toBeGreaterThanOrEqual(8);
    expect(probes).toBeLessThanOrEqual(11);
  });

  it("once it is out, a partition's first failure opens its circuit at once, held by the account (a frozen endpoint's resets)", () => {
    const breaker = make({ pacing: false });
    // Two partitions fail for a quarter second, nothing served: the account is out (six failures in a row, two partitions).
    failInTurn(breaker, ["a", "b"], refused, 6, 50);
    attempt(breaker, "fresh", refused);
    expect(breaker.stateOf(key("fresh"))).toBe("open");
    // Held by the account: its probe is due after ACCOUNT_PROBE_IN_MS, not the configured reset.
    vi.advanceTimersByTime(ACCOUNT_PROBE_IN_MS);
    expect(breaker.stateOf(key("fresh"))).toBe("half_open");
  });

  it("a frozen endpoint's resets, all at once after seconds of nothing served, open each partition's circuit at its first", () => {
    const breaker = make({ pacing: false });
    attempt(breaker, "warm", "success"); // served while the breaker watched nothing: only its time is kept
    vi.advanceTimersByTime(3_000); // frozen: nothing answers
    for (let i = 0; i < 6; i++) attempt(breaker, `p${i}`, reset);
    attempt(breaker, "fresh", reset);
    expect(breaker.stateOf(key("fresh"))).toBe("open");
    // The same resets a moment after a success are no outage.
    const serving = make({ pacing: false });
    attempt(serving, "warm", "success");
    vi.advanceTimersByTime(100);
    for (let i = 0; i < 6; i++) attempt(serving, `p${i}`, reset);
    attempt(serving, "fresh", reset);
    expect(serving.stateOf(key("fresh"))).toBe("closed");
  });

  it("forgets an old outage once its scopes are swept: a later failure on the serving account is its partition's own", () => {
    const breaker = make({ pacing: false, idleTtlInMs: 1_000 });
    failInTurn(breaker, ["a", "b"], refused, 6, 50); // out: six refusals in a row over two partitions
    vi.advanceTimersByTime(5_000); // idle: the sweep forgets every scope
    expect(breaker.size).toBe(0);
    attempt(breaker, "warm", "success"); // back, while the breaker watches nothing
    vi.advanceTimersByTime(1_000);
    attempt(breaker, "fresh", reset);
    expect(breaker.stateOf(key("fresh"))).toBe("closed");
  });

  it("a circuit opening while the account is out is held by it, whichever partition failed just before", () => {
    const breaker = make({ pacing: false });
    failInTurn(breaker, ["a"], refused, 3, 100); // a: three failures, 0-200 ms
    attempt(breaker, "b", "success"); // the account serves at 300 ms
    vi.advanceTimersByTime(260);
    failInTurn(breaker, ["c", "b", "a", "a"], refused, 4, 5); // spread, nothing served for a quarter second; a's fifth opens it, after a's own
    expect(breaker.stateOf(key("a"))).toBe("open");
    vi.advanceTimersByTime(ACCOUNT_PROBE_IN_MS);
    expect(breaker.stateOf(key("a"))).toBe("half_open"); // the account's probe period, not resetTimeoutInMs
  });

  it("refused connections need no quiet quarter second: consecutiveFailures of them in a row and the next partition's first opens at once", () => {
    const breaker = make({ pacing: false });
    failInTurn(breaker, ["p0", "p1", "p2", "p3", "p4"], refused, 5, 5);
    attempt(breaker, "fresh", refused);
    expect(breaker.stateOf(key("fresh"))).toBe("open");
    // Resets are answers a partition may give between successes: the same five of them open nothing yet.
    const resets = make({ pacing: false });
    failInTurn(resets, ["p0", "p1", "p2", "p3", "p4"], reset, 5, 5);
    attempt(resets, "fresh", reset);
    expect(resets.stateOf(key("fresh"))).toBe("closed");
  });

  it("a partition's first failure is its own while the account served within the quarter second, or failed fewer times than consecutiveFailures", () => {
    const served = make({ pacing: false });
    failInTurn(served, ["a", "b"], refused, 6, 50);
    attempt(served, "healthy", "success");
    attempt(served, "fresh", refused);
    expect(served.stateOf(key("fresh"))).toBe("closed");

    const patient = make({ pacing: false, consecutiveFailures: 20 });
    failInTurn(patient, ["a", "b"], refused, 6, 50);
    attempt(patient, "fresh", refused);
    expect(patient.stateOf(key("fresh"))).toBe("closed");
  });

  it("one partition failing while the account serves elsewhere is its own: not held, closed only by its own probe", () => {
    const breaker = make({ pacing: false });
    for (let i = 0; i < 5; i++) {
      attempt(breaker, "moving", refused);
      attempt(breaker, "healthy", "success");
      vi.advanceTimersByTime(100);
    }
    expect(breaker.stateOf(key("moving"))).toBe("open");
    attempt(breaker, "healthy", "success");
    expect(breaker.stateOf(key("moving"))).toBe("open");
  });
});
