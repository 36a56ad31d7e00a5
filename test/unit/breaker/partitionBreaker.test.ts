import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../../../src/address/requestAddress.js";
import { SEND_NOW, type Admission, type Send, type Wait } from "../../../src/breaker/attemptGate.js";
import type { CircuitTransition } from "../../../src/breaker/partitionBreakerInterface.js";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import type { PartitionBreakerOptions } from "../../../src/breaker/partitionBreakerOptions.js";
import type { AttemptResult } from "../../../src/classification/attemptResult.js";
import type { OutcomeClass } from "../../../src/classification/outcomeClass.js";
import { QUIET_IN_MS } from "../../../src/flow/scopeController.js";
import { logger } from "../../../src/logging/logger.js";

const HOST = "https://acct.table.core.windows.net";
const ACCOUNT = "table|acct";
const key = (pk: string) => `table|acct|orders|${pk}`;

const STATUS: Record<OutcomeClass, number | undefined> = { success: 200, throttled: 503, transient: 500, timeout: 504, permanent: 404, aborted: undefined };
const result = (outcomeClass: OutcomeClass): AttemptResult => ({ outcomeClass, status: STATUS[outcomeClass] });
const addressOf = (pk: string): RequestAddress => readRequestAddress(createPipelineRequest({ url: `${HOST}/orders(PartitionKey='${pk}',RowKey='r')`, method: "GET" }));
const address = (target: string | RequestAddress): RequestAddress => (typeof target === "string" ? addressOf(target) : target);

/** Asks as the retry loop does: an open loop's first ask, or one asking again with its wait. */
function admit(breaker: PartitionBreaker, target: string | RequestAddress, options: { queueForInMs?: number; retry?: boolean; waited?: Wait } = {}): Admission {
  return breaker.admit(address(target), { queueForInMs: options.queueForInMs ?? 60_000, retry: options.retry ?? false, waited: options.waited });
}

/** One attempt: admitted and, when let go at once, answered `outcome` now. Returns the admission. */
function attempt(breaker: PartitionBreaker, target: string | RequestAddress, outcome: OutcomeClass): Admission {
  const admission = admit(breaker, target);
  if (admission.decision === "send") breaker.record(address(target), admission, result(outcome));
  return admission;
}

/** `times` attempts on `pk` answering `outcome`, `gapInMs` apart (the first now). */
function attempts(breaker: PartitionBreaker, pk: string, outcome: OutcomeClass, times: number, gapInMs = 100): Admission[] {
  const admissions: Admission[] = [];
  for (let i = 0; i < times; i++) {
    if (i > 0) vi.advanceTimersByTime(gapInMs);
    admissions.push(attempt(breaker, pk, outcome));
  }
  return admissions;
}

/** Takes `pk` out: five failures (resets) in a row. */
function takeOut(breaker: PartitionBreaker, pk: string): void {
  attempts(breaker, pk, "transient", 5, 1);
  expect(breaker.stateOf(key(pk))).toBe("open");
}

/** Waits on `wait` until its turn (woken) or its delay, then asks again until it is no wait; returns what the breaker answers then. */
function askAgainWhenDue(breaker: PartitionBreaker, target: string, wait: Wait): Admission {
  let woken = false;
  const stop = wait.wake?.listen(() => (woken = true));
  for (let waited = 0; !woken && waited < wait.delayInMs; waited += 1) vi.advanceTimersByTime(1);
  stop?.();
  const again = admit(breaker, target, { waited: wait, retry: true });
  return again.decision === "wait" && again !== wait && !woken ? askAgainWhenDue(breaker, target, again) : again;
}

/** Asks again with `admission` when it is a wait, after its delay (as the loop does); a send or a refusal is returned as is. */
function askAgain(breaker: PartitionBreaker, target: string, admission: Admission): Admission {
  return admission.decision === "wait" ? askAgainWhenDue(breaker, target, admission) : admission;
}

const breakers: PartitionBreaker[] = [];
function make(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const breaker = createPartitionBreaker(options);
  breakers.push(breaker);
  return breaker;
}

beforeEach(() => {
  vi.useFakeTimers({ now: 1_000_000 });
  vi.spyOn(logger, "warning").mockImplementation(() => undefined);
  vi.spyOn(logger, "info").mockImplementation(() => undefined);
});
afterEach(() => {
  for (const breaker of breakers.splice(0)) breaker.dispose();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("createPartitionBreaker: no trouble, no state", () => {
  it("successes and 404s hold no state, start no timer, and every attempt is let go as SEND_NOW", () => {
    const breaker = make();
    for (const outcome of ["success", "permanent", "success"] as const) expect(attempt(breaker, "p1", outcome)).toBe(SEND_NOW);
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("while it holds nothing, an attempt's scope is not even read", () => {
    const breaker = make();
    const a = addressOf("p1");
    const read = vi.spyOn(a, "scopeKey", "get");
    attempt(breaker, a, "success");
    expect(read).not.toHaveBeenCalled();
  });

  it("a first unserved answer makes state for its partition and its account, which then watch every attempt", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(breaker.stateOf(ACCOUNT)).toBe("closed");
    // Watched now: a healthy partition's attempt is counted under its own scope too.
    expect(attempt(breaker, "p2", "success").decision).toBe("send");
    expect(breaker.stateOf(key("p2"))).toBe("closed");
  });

  it("requests without a scope bypass it; a user getScope overrides, and undefined or a throw bypasses", () => {
    const breaker = make();
    const noScope = readRequestAddress(createPipelineRequest({ url: "https://example.com/whatever", method: "GET" }));
    for (let i = 0; i < 10; i++) expect(attempt(breaker, noScope, "throttled")).toBe(SEND_NOW);
    expect(breaker.size).toBe(0);
    const getScope = (r: PipelineRequest): string | undefined => {
      if (r.url.includes("'boom'")) throw new Error("getScope bug");
      return r.url.includes("'mine'") ? "my-scope" : undefined;
    };
    const mine = make({ getScope });
    for (const pk of ["mine", "other", "boom"]) attempt(mine, pk, "throttled");
    expect(mine.stateOf("my-scope")).toBe("closed");
    expect(mine.stateOf(key("other"))).toBeUndefined();
  });

  it("scopes Azurite path-style URLs with the breaker's service", () => {
    const breaker = make({ service: "blob" });
    const azurite = () => readRequestAddress(createPipelineRequest({ url: "http://127.0.0.1:10000/devstoreaccount1/photos/cat.jpg", method: "GET" }));
    expect(azurite().scopeKey).toBeUndefined();
    for (let i = 0; i < 5; i++) attempt(breaker, azurite(), "transient");
    expect(breaker.stateOf("blob|devstoreaccount1|photos|cat.jpg")).toBe("open");
  });
});

describe("createPartitionBreaker: a partition that serves nothing", () => {
  it("is out at the fifth throttle in a row once nothing was served for a quarter second; before that, attempts go", () => {
    const breaker = make();
    attempt(breaker, "p1", "success");
    const admissions = attempts(breaker, "p1", "throttled", 4, 50);
    expect(admissions.every((a) => a.decision === "send")).toBe(true);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    vi.advanceTimersByTime(QUIET_IN_MS);
    attempt(breaker, "p1", "throttled");
    expect(breaker.stateOf(key("p1"))).toBe("open");
  });

  it("is out at the fifth failure in a row (resets, refused connections) at once; consecutiveFailures sets how many", () => {
    takeOut(make(), "p1");
    const three = make({ consecutiveFailures: 3 });
    attempts(three, "p1", "transient", 3, 1);
    expect(three.stateOf(key("p1"))).toBe("open");
    const never = make({ consecutiveFailures: Infinity });
    expect(attempts(never, "p1", "transient", 50, 1).every((a) => a.decision === "send")).toBe(true);
  });

  it("aborted attempts say nothing: they never count as failures", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    attempts(breaker, "p1", "aborted", 20, 50);
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("an open loop waits for its probe (reason circuit), one per reset period; a caller that cannot wait that long is refused", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const wait = admit(breaker, "p1");
    expect(wait).toMatchObject({ decision: "wait", reason: "circuit" });
    expect((wait as Wait).delayInMs).toBeGreaterThan(250);
    expect((wait as Wait).delayInMs).toBeLessThanOrEqual(300);
    expect(admit(breaker, "p1", { queueForInMs: 50 })).toMatchObject({ decision: "refuse", reason: "circuit-open", scope: key("p1") });
    // Its turn comes with the probe: it is let go, as a probe.
    const probe = askAgainWhenDue(breaker, "p1", wait as Wait);
    expect(probe).toMatchObject({ decision: "send", probe: true });
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
  });

  it("while a probe is out, a caller that may not wait for the next one waits what it may for the probe's answer; one that may not wait at all is refused", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const probe = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait);
    expect(probe).toMatchObject({ decision: "send", probe: true });
    // The next probe is a reset period off: further than this caller may wait, but the probe out may answer first.
    const near = admit(breaker, "p1", { queueForInMs: 250 });
    expect(near).toMatchObject({ decision: "wait", reason: "circuit", delayInMs: 250 });
    expect(admit(breaker, "p1", { queueForInMs: 0 })).toMatchObject({ decision: "refuse", reason: "circuit-open" });
    // The probe is served: the scope is back, and the waiter's turn comes at once.
    vi.advanceTimersByTime(20);
    breaker.record(addressOf("p1"), probe as Send, result("success"));
    expect(askAgainWhenDue(breaker, "p1", near as Wait)).toMatchObject({ decision: "send" });
  });

  it("a failed probe keeps it out; probes go one per reset period whether or not the last has answered", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const sent: Send[] = [];
    for (let t = 0; t < 1_000; t += 10) {
      vi.advanceTimersByTime(10);
      const admission = admit(breaker, "p1", { queueForInMs: 5 });
      if (admission.decision === "send") sent.push(admission);
      // A wait for the probe's answer, not taken: given back, as the contract asks.
      else if (admission.decision === "wait") breaker.release(addressOf("p1"), admission);
    }
    // None answered (a partition timing out): a probe every 300 ms still.
    expect(sent.length).toBe(3);
    expect(sent.every((s) => s.probe === true)).toBe(true);
    for (const probe of sent) breaker.record(addressOf("p1"), probe, result("throttled"));
    expect(breaker.stateOf(key("p1"))).not.toBe("closed");
  });

  it("a served probe brings it back: one attempt per round trip, and the queue goes, newest first", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const older = admit(breaker, "p1") as Wait;
    vi.advanceTimersByTime(5);
    const newer = admit(breaker, "p1") as Wait;
    const probe = askAgainWhenDue(breaker, "p1", newer);
    expect(probe).toMatchObject({ decision: "send", probe: true });
    vi.advanceTimersByTime(2);
    breaker.record(addressOf("p1"), probe as Send, result("success"));
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(askAgainWhenDue(breaker, "p1", older)).toMatchObject({ decision: "send" });
    expect(breaker.statusOf(key("p1")).state).toBe("paced");
  });

  it("a 404 probe brings it back too: the partition answers", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    vi.advanceTimersByTime(300);
    const probe = admit(breaker, "p1");
    expect(probe).toMatchObject({ decision: "send", probe: true });
    breaker.record(addressOf("p1"), probe as Send, result("permanent"));
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("partitions are independent: p1 out does not touch p2", () => {
    const breaker = make();
    attempt(breaker, "p2", "success");
    takeOut(breaker, "p1");
    expect(attempt(breaker, "p2", "success")).toMatchObject({ decision: "send" });
    expect(breaker.stateOf(key("p2"))).toBe("closed");
  });

  it("an attempt unanswered for a quarter second, with nothing served meanwhile, is taken for lost: five are the partition out", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    const hung: Admission[] = [];
    for (let i = 0; i < 5; i++) {
      hung.push(admit(breaker, "p1"));
      vi.advanceTimersByTime(10);
    }
    expect(hung.every((a) => a.decision === "send")).toBe(true);
    vi.advanceTimersByTime(QUIET_IN_MS);
    // The next ask finds the partition silent: it waits while the answers already received are read (none).
    const next = admit(breaker, "p1");
    expect(next).toMatchObject({ decision: "wait" });
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    vi.advanceTimersByTime(1);
    // Then they are lost: the partition serves nothing, and the waiter waits for its probe.
    expect(breaker.stateOf(key("p1"))).toBe("open");
    expect(admit(breaker, "p1", { waited: next as Wait, retry: true })).toMatchObject({ decision: "wait", reason: "circuit" });
  });

  it("a probe taken for lost that answers late does not free the place of the probe out after it", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const first = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait) as Send;
    expect(first.probe).toBe(true);
    // Unanswered past its loss time: the next probe goes at its period.
    const second = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait) as Send;
    expect(second).toMatchObject({ decision: "send", probe: true });
    breaker.record(addressOf("p1"), first, result("transient"));
    // The second is still out: no third probe is let go before the next period.
    expect(breaker.statusOf(key("p1"))).toMatchObject({ state: "half_open", available: false });
  });
});

describe("createPartitionBreaker: a hot partition", () => {
  /** Every other answer served: a partition at about twice its capacity, over a second; a waiter asks again when woken, as the loop does. */
  function runHot(breaker: PartitionBreaker, pk: string): number {
    let waited = 0;
    let answers = 0;
    const go = (admission: Admission): void => {
      if (admission.decision === "send") breaker.record(addressOf(pk), admission, result(answers++ % 2 === 0 ? "success" : "throttled"));
      if (admission.decision !== "wait") return;
      waited += 1;
      admission.wake?.listen(() => setTimeout(() => go(admit(breaker, pk, { waited: admission, retry: true })), 0));
    };
    for (let i = 0; i < 100; i++) {
      vi.advanceTimersByTime(10);
      go(admit(breaker, pk));
    }
    return waited;
  }

  it("is never out: it serves between its throttles; it is paced at what it serves", () => {
    const breaker = make();
    runHot(breaker, "hot");
    expect(breaker.stateOf(key("hot"))).toBe("closed");
    const paced = breaker.pacedScopes().find((p) => p.scope === key("hot"));
    expect(paced?.level).toBe("partition");
    expect(paced?.ratePerSecond).toBeGreaterThan(10);
    expect(paced?.ratePerSecond).toBeLessThan(100);
    expect(breaker.statusOf(key("hot")).state).toBe("paced");
  });

  it("does not slow its healthy neighbours, nor the account (one hot key is no account's trouble)", () => {
    const breaker = make();
    runHot(breaker, "hot");
    expect(breaker.pacedScopes().some((p) => p.level === "account")).toBe(false);
    for (let i = 0; i < 20; i++) expect(attempt(breaker, `cool${i}`, "success").decision).toBe("send");
  });

  it("pacing: false teaches no rate: throttles are only retried", () => {
    const breaker = make({ pacing: false });
    runHot(breaker, "hot");
    expect(breaker.pacedScopes()).toEqual([]);
  });
});

describe("createPartitionBreaker: an account that serves nothing", () => {
  /** Every partition of the account throttled, 10 partitions, 5 ms apart, for `forInMs`. */
  function throttleAll(breaker: PartitionBreaker, forInMs: number, outcome: OutcomeClass = "throttled"): Admission[] {
    const admissions: Admission[] = [];
    for (let t = 0, i = 0; t < forInMs; t += 5, i++) {
      vi.advanceTimersByTime(5);
      // Callers that do not wait: what goes is what the account lets go at once.
      const admission = admit(breaker, `p${i % 10}`, { queueForInMs: 0 });
      if (admission.decision === "send") breaker.record(addressOf(`p${i % 10}`), admission, result(outcome));
      admissions.push(admission);
    }
    return admissions;
  }

  it("is out as a whole, its partitions not: their failures are the account's", () => {
    const breaker = make();
    throttleAll(breaker, 400);
    expect(breaker.stateOf(ACCOUNT)).not.toBe("closed");
    expect(breaker.openScopes().concat(breaker.halfOpenScopes())).toEqual([ACCOUNT]);
    for (let i = 0; i < 10; i++) expect(breaker.stateOf(key(`p${i}`))).toBe("closed");
    expect(breaker.statusOf(key("p3"))).toMatchObject({ state: expect.stringMatching(/open|half_open/) });
  });

  it("its probes go one per a third of the reset period for all its partitions", () => {
    const breaker = make();
    throttleAll(breaker, 400);
    const sent = throttleAll(breaker, 1_000).filter((a) => a.decision === "send");
    expect(sent.length).toBeGreaterThanOrEqual(9);
    expect(sent.length).toBeLessThanOrEqual(11);
    expect(sent.every((a) => (a as Send).probe === true)).toBe(true);
  });

  it("an answer that is no success (a 403 from another partition) lets through a few attempts at most, not its queue", () => {
    const breaker = make();
    attempt(breaker, "p0", "throttled");
    // Ten requests of another kind, sent before the throttle took the account out, answered 403 during it.
    const trickle = Array.from({ length: 10 }, () => admit(breaker, "trickle") as Send);
    throttleAll(breaker, 400);
    const queued = Array.from({ length: 50 }, (_, i) => admit(breaker, `p${i % 10}`));
    expect(queued.every((a) => a.decision === "wait")).toBe(true);
    // A queued caller is woken when its turn lets its attempt go; that attempt is throttled too.
    let letGo = 0;
    queued.forEach((wait, i) =>
      (wait as Wait).wake?.listen(() => {
        letGo += 1;
        // As the loop does: it resumes after the breaker's call has returned.
        setTimeout(() => {
          const turn = admit(breaker, `p${i % 10}`, { waited: wait as Wait, retry: true });
          if (turn.decision === "send") breaker.record(addressOf(`p${i % 10}`), turn, result("throttled"));
        }, 0);
      }),
    );
    let sent = 0;
    for (let t = 0; t < 1_000; t += 5) {
      vi.advanceTimersByTime(5);
      if (t % 100 === 0) breaker.record(addressOf("trickle"), trickle.pop() as Send, result("permanent"));
      const admission = admit(breaker, `p${(t / 5) % 10}`, { queueForInMs: 0 });
      if (admission.decision === "send") {
        sent += 1;
        breaker.record(addressOf(`p${(t / 5) % 10}`), admission, result("throttled"));
      }
    }
    // Ten 403s in the second: each lets a few go before the throttles take it out again; no more than 10 probes besides.
    expect(sent + letGo).toBeLessThanOrEqual(10 + 10 * 6);
    expect(letGo).toBeLessThan(50);
    expect(breaker.stateOf(ACCOUNT)).not.toBe("closed");
  });

  it("resets from two partitions, nothing served, are theirs; from three, the account's", () => {
    const breaker = make();
    for (let i = 0; i < 10; i++) attempt(breaker, `p${i % 2}`, "transient");
    expect(breaker.stateOf(ACCOUNT)).toBe("closed");
    expect(breaker.openScopes().sort()).toEqual([key("p0"), key("p1")]);
    // The first of each partition is its own (a first failure is no sign of the account's), the next five the account's.
    const other = make();
    for (let i = 0; i < 7; i++) attempt(other, `p${i % 3}`, "transient");
    expect(other.stateOf(ACCOUNT)).toBe("closed");
    attempt(other, "p1", "transient");
    expect(other.stateOf(ACCOUNT)).toBe("open");
  });

  it("a partition of a serving account that fails alone is out on its own, and does not take the account out", () => {
    const breaker = make();
    for (let t = 0; t < 500; t += 5) {
      vi.advanceTimersByTime(5);
      attempt(breaker, "p0", "throttled");
      attempt(breaker, `p${1 + ((t / 5) % 9)}`, "success");
    }
    expect(breaker.stateOf(key("p0"))).toBe("open");
    expect(breaker.stateOf(ACCOUNT)).toBe("closed");
  });

  it("an account out forgets its partitions' limits: back, they are not held to what they served before", () => {
    const breaker = make();
    // p0 hot alone (its own limit), then the whole account fails.
    for (let i = 0; i < 100; i++) {
      vi.advanceTimersByTime(5);
      attempt(breaker, "p0", i % 2 === 0 ? "success" : "throttled");
    }
    expect(breaker.pacedScopes().map((p) => p.scope)).toEqual([key("p0")]);
    for (let i = 0; i < 20; i++) attempt(breaker, `p${1 + (i % 9)}`, "transient");
    expect(breaker.stateOf(ACCOUNT)).toBe("open");
    expect(breaker.pacedScopes()).toEqual([]);
  });

  it("an account throttled for a share of its requests is paced at what it serves; its partitions are not", () => {
    const breaker = make();
    for (let i = 0; i < 400; i++) {
      vi.advanceTimersByTime(5);
      attempt(breaker, `p${i % 10}`, i % 3 === 0 ? "success" : "throttled");
    }
    const paced = breaker.pacedScopes();
    expect(paced.find((p) => p.scope === ACCOUNT)?.level).toBe("account");
    expect(paced.filter((p) => p.level === "partition")).toEqual([]);
  });
});

describe("createPartitionBreaker: queries change nothing", () => {
  it("stateOf, statusOf, openScopes, halfOpenScopes, stateCounts, refusesNow", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const seen: CircuitTransition[] = [];
    breaker.onTransition((t) => seen.push(t));
    for (let i = 0; i < 3; i++) {
      expect(breaker.openScopes()).toEqual([key("p1")]);
      expect(breaker.statusOf(key("p1"))).toMatchObject({ state: "open", available: false });
      expect(breaker.refusesNow(addressOf("p1"))).toBe(true);
      expect(breaker.refusesNow(addressOf("p2"))).toBe(false);
      expect(breaker.stateCounts()).toMatchObject({ open: 1 });
    }
    vi.advanceTimersByTime(300);
    expect(breaker.halfOpenScopes()).toEqual([key("p1")]);
    expect(breaker.statusOf(key("p1"))).toMatchObject({ state: "half_open", available: true });
    expect(seen).toEqual([]);
    expect(breaker.statusOf(key("never"))).toEqual({ state: "healthy", available: true, retryAfterInMs: 0 });
  });

  it("a backoff's wake source fires when its partition goes out, and when it comes back", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    let woken = 0;
    breaker.wakeOf(addressOf("p1"))?.listen(() => (woken += 1));
    takeOut(breaker, "p1");
    expect(woken).toBe(1);
    breaker.wakeOf(addressOf("p1"))?.listen(() => (woken += 1));
    vi.advanceTimersByTime(300);
    attempt(breaker, "p1", "success");
    expect(woken).toBe(2);
  });
});

describe("createPartitionBreaker: events, logging", () => {
  it("logs going out and coming back at warning, each probe's round at info, with the scope key", () => {
    const warning = vi.mocked(logger.warning);
    const info = vi.mocked(logger.info);
    const breaker = make();
    takeOut(breaker, "p1");
    vi.advanceTimersByTime(300);
    attempt(breaker, "p1", "throttled");
    vi.advanceTimersByTime(300);
    attempt(breaker, "p1", "success");
    const warnings = warning.mock.calls.map((c) => String(c[0]));
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(/opened/);
    expect(warnings[1]).toMatch(/closed/);
    const infos = info.mock.calls.map((c) => String(c[0])).filter((line) => line.startsWith("Circuit"));
    expect(infos.some((line) => /half-open/.test(line))).toBe(true);
    for (const line of [...warnings, ...infos]) expect(line).toContain(`"${key("p1")}"`);
  });

  it("a throwing transition listener is ignored; unsubscribe stops delivery; onTransition needs a function", () => {
    const breaker = make();
    const seen: string[] = [];
    breaker.onTransition(() => {
      throw new Error("listener bug");
    });
    const off = breaker.onTransition((t) => seen.push(t.to));
    takeOut(breaker, "p1");
    off();
    vi.advanceTimersByTime(300);
    attempt(breaker, "p1", "success");
    expect(seen).toEqual(["open"]);
    expect(() => breaker.onTransition(null as never)).toThrow(TypeError);
  });
});

describe("createPartitionBreaker: bounded state", () => {
  it("keeps at most maxScopes, forgetting the least recently used", () => {
    const breaker = make({ maxScopes: 3 });
    for (const pk of ["a", "b", "c", "d", "e"]) attempt(breaker, pk, "throttled");
    expect(breaker.size).toBe(3);
    expect(breaker.stateOf(key("a"))).toBeUndefined();
    expect(breaker.stateOf(key("e"))).toBe("closed");
  });

  it("forgets what is idle for idleTtlInMs with one timer, and what has nothing left to limit at the sweep", () => {
    const breaker = make({ idleTtlInMs: 1_000 });
    for (let i = 0; i < 500; i++) attempt(breaker, `k${i}`, "throttled");
    expect(breaker.size).toBe(501);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(2_000);
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a queue's timer is one per scope with waiters, unref'd, and gone with them", () => {
    const breaker = make({ idleTtlInMs: Infinity });
    takeOut(breaker, "p1");
    const wait = admit(breaker, "p1") as Wait;
    expect(vi.getTimerCount()).toBe(1);
    breaker.release(addressOf("p1"), wait);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("dispose forgets everything, stops every timer, lets later attempts straight through; idempotent", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const wait = admit(breaker, "p1") as Wait;
    let woken = false;
    wait.wake?.listen(() => (woken = true));
    breaker.dispose();
    breaker.dispose();
    expect(woken).toBe(true);
    expect(breaker.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
    expect(attempts(breaker, "p1", "transient", 10, 1)).toEqual(Array.from({ length: 10 }, () => SEND_NOW));
  });
});

describe("createPartitionBreaker: what a second reading found", () => {
  it("after the trouble, the sweep forgets every scope with nothing left to limit, attempts in flight or not: the success path holds nothing again", () => {
    const breaker = make({ idleTtlInMs: 200 });
    attempt(breaker, "p0", "throttled");
    expect(breaker.size).toBe(2);
    // Steady load: two attempts always in flight, over ten partitions, each answered 10 ms after it went.
    let inFlight: { pk: string; sent: Admission }[] = [];
    for (let t = 0; t < 3_000; t += 10) {
      for (const { pk, sent } of inFlight) if (sent.decision === "send") breaker.record(addressOf(pk), sent, result("success"));
      inFlight = [0, 1].map((i) => ({ pk: `p${(t / 10 + i) % 10}`, sent: admit(breaker, `p${(t / 10 + i) % 10}`) }));
      vi.advanceTimersByTime(10);
    }
    expect(breaker.size).toBe(0);
    expect(admit(breaker, "p3")).toBe(SEND_NOW);
    // The answers to attempts sent under the forgotten scopes make no state.
    for (const { pk, sent } of inFlight) if (sent.decision === "send") breaker.record(addressOf(pk), sent, result("success"));
    expect(breaker.size).toBe(0);
  });

  it("a scope that serves while its oldest attempt hangs takes it for lost only once it has been silent for the loss time", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const probe = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait) as Send;
    breaker.record(addressOf("p1"), probe, result("success"));
    // Back: one attempt hangs, the others are served, ten a second.
    const hung = admit(breaker, "p1");
    expect(hung.decision).toBe("send");
    const timers = vi.spyOn(globalThis, "setTimeout");
    for (let i = 0; i < 50; i++) {
      vi.advanceTimersByTime(20);
      const turn = askAgain(breaker, "p1", admit(breaker, "p1"));
      if (turn.decision === "send") breaker.record(addressOf("p1"), turn, result("success"));
    }
    // Never silent: the hung attempt is still in flight, and no timer was set for a moment already past.
    expect(breaker.stateOf(key("p1"))).toBe("closed");
    expect(timers.mock.calls.length).toBeLessThan(150);
  });

  it("probes that overlap (a probe period shorter than the loss time): one answering leaves the next one out", () => {
    const breaker = make({ resetTimeoutInMs: 100 });
    takeOut(breaker, "p1");
    const first = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait) as Send;
    const second = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait) as Send;
    expect([first.probe, second.probe]).toEqual([true, true]);
    vi.advanceTimersByTime(50);
    breaker.record(addressOf("p1"), first, result("throttled"));
    // The second is still out: a caller that may wait 30 ms waits for its answer, and the circuit reads half-open.
    expect(admit(breaker, "p1", { queueForInMs: 30 })).toMatchObject({ decision: "wait", reason: "circuit" });
    expect(breaker.stateOf(key("p1"))).toBe("half_open");
  });

  it("a late 404 to an attempt taken for lost does not bring its partition back; a late success does", () => {
    const breaker = make();
    attempt(breaker, "p1", "throttled");
    const hung = Array.from({ length: 5 }, () => admit(breaker, "p1") as Send);
    vi.advanceTimersByTime(QUIET_IN_MS);
    admit(breaker, "p1", { queueForInMs: 0 });
    vi.advanceTimersByTime(1);
    expect(breaker.stateOf(key("p1"))).toBe("open");
    breaker.record(addressOf("p1"), hung[0] as Send, result("permanent"));
    expect(breaker.stateOf(key("p1"))).toBe("open");
    breaker.record(addressOf("p1"), hung[1] as Send, result("success"));
    expect(breaker.stateOf(key("p1"))).toBe("closed");
  });

  it("statusOf a partition never seen, of an account that serves nothing: not available, as admit would say", () => {
    const breaker = make();
    for (let t = 0; t < 400; t += 5) {
      vi.advanceTimersByTime(5);
      attempt(breaker, `p${(t / 5) % 10}`, "throttled");
    }
    expect(breaker.stateOf(ACCOUNT)).not.toBe("closed");
    const status = breaker.statusOf(key("never-seen"));
    expect(status.state).toMatch(/open|half_open/);
    expect(admit(breaker, "never-seen", { queueForInMs: 0 }).decision).not.toBe("send");
    expect(breaker.refusesNow(addressOf("never-seen"))).toBe(true);
  });

  it("an Azurite path-style URL gets its account's scope too when only the breaker knows the service", () => {
    const breaker = make({ service: "blob" });
    const blob = (name: string) => readRequestAddress(createPipelineRequest({ url: `http://127.0.0.1:10000/devstoreaccount1/photos/${name}`, method: "GET" }));
    attempt(breaker, blob("a.jpg"), "transient");
    expect(breaker.size).toBe(2);
    for (let i = 0; i < 9; i++) attempt(breaker, blob(`${i % 3}.jpg`), "transient");
    expect(breaker.stateOf("blob|devstoreaccount1")).toBe("open");
  });

  it("a turn given back (its operation ended before sending) lets the next waiter go at once", () => {
    const breaker = make();
    takeOut(breaker, "p1");
    const probe = askAgainWhenDue(breaker, "p1", admit(breaker, "p1") as Wait) as Send;
    vi.advanceTimersByTime(2);
    breaker.record(addressOf("p1"), probe, result("success"));
    // Back at one attempt per round trip (2 ms): fill the window, then queue one more.
    const sent: Send[] = [];
    let queued: Admission = admit(breaker, "p1");
    for (let i = 0; i < 10 && queued.decision === "send"; i++) {
      sent.push(queued);
      vi.advanceTimersByTime(2);
      queued = admit(breaker, "p1");
    }
    expect(queued.decision).toBe("wait");
    let woken = false;
    (queued as Wait).wake?.listen(() => (woken = true));
    breaker.release(addressOf("p1"), sent[0] as Send);
    expect(woken).toBe(true);
    expect(admit(breaker, "p1", { waited: queued as Wait, retry: true }).decision).toBe("send");
  });
});

describe("createPartitionBreaker: options", () => {
  it.each<[string, unknown, typeof TypeError | typeof RangeError, RegExp]>([
    ["mode", "sometimes", TypeError, /^mode was removed/],
    ["service", "files", TypeError, /service must be one of/],
    ["getScope", null, TypeError, /getScope must be a function/],
    ["resetTimeoutInMs", 0, RangeError, /resetTimeoutInMs must be between 1 and .*; got 0/],
    ["resetTimeoutInMs", null, TypeError, /resetTimeoutInMs must be a number; got null/],
    ["consecutiveFailures", 2.5, RangeError, /consecutiveFailures must be an integer; got 2.5/],
    ["maxScopes", Infinity, RangeError, /maxScopes must be a finite number/],
    ["idleTtlInMs", Number.NaN, TypeError, /idleTtlInMs must be a number; got NaN/],
    ["pacing", null, TypeError, /^pacing must be true or false/],
    ["pacing", { decreaseFactor: 0.5 }, TypeError, /^pacing must be true or false \(its options were removed/],
    ["rollingWindowInMs", 3_000, TypeError, /^rollingWindowInMs was removed/],
  ])("rejects %s = %j, naming it", (name, value, type, message) => {
    const build = () => createPartitionBreaker({ [name]: value } as PartitionBreakerOptions);
    expect(build).toThrow(type);
    expect(build).toThrow(message);
  });

  it("rejects unknown keys and non-objects, null included", () => {
    expect(() => createPartitionBreaker({ resetTimeout: 5 } as PartitionBreakerOptions)).toThrow(/^resetTimeout is not a known option/);
    expect(() => createPartitionBreaker(null as unknown as PartitionBreakerOptions)).toThrow(/got null/);
  });
});
