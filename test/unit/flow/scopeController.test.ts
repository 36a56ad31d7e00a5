import { describe, expect, it } from "vitest";
import { DEMAND_SHARE, HOLD_ANSWERS, isAccountsEvidence, QUIET_IN_MS, ScopeController, type ControllerSettings, type Evidence } from "../../../src/flow/scopeController.js";

/** A partition's settings: probed every 300 ms while out, out after 5 unserved answers in a row. */
const PARTITION: ControllerSettings = { probeIntervalInMs: 300, unservedToOut: 5, pacing: true };

/** A scope under test with its own clock: `send` and `answer` move nothing; `at` is set by the test. */
function scope(settings: ControllerSettings = PARTITION, fastestInMs?: number) {
  const control = new ScopeController(0, settings, fastestInMs);
  return {
    control,
    /** An answer of `evidence` to an attempt sent `roundTripInMs` before `at`, observed and then taken as the scope's evidence (as the breaker does). */
    answer: (evidence: Evidence, at: number, roundTripInMs = 2, limited = true, from = "p") => {
      control.observe(evidence === "throttled" || evidence === "failed", from, at);
      return control.answer(evidence, at - roundTripInMs, at, limited);
    },
  };
}

/** Serves `count` answers, `gapInMs` apart from `from`, each a first attempt asked and sent; returns the time after. */
function serveSteadily(s: ReturnType<typeof scope>, from: number, count: number, gapInMs: number): number {
  let at = from;
  for (let i = 0; i < count; i++, at += gapInMs) {
    s.control.asked(at);
    s.control.sent(at);
    s.answer("served", at + 2, 2, false);
  }
  return at;
}

describe("ScopeController: served", () => {
  it("never throttled, it limits nothing: no rate, and every attempt may go now", () => {
    const s = scope();
    serveSteadily(s, 0, 50, 10);
    expect(s.control.ratePerSecond).toBe(Infinity);
    expect(s.control.nextSendAt(500, 1_000)).toBe(500);
    expect(s.control.out).toBe(false);
  });
});

describe("ScopeController: throttled while it serves", () => {
  it("learns nothing before a quarter second is measured; then the rate drops to what it served", () => {
    const s = scope();
    // 100 asked and sent a second, half of them served (a hot partition at twice its capacity: 50/s).
    let at = 0;
    for (let i = 0; at < QUIET_IN_MS - 20; i++, at += 10) {
      s.control.asked(at);
      s.control.sent(at);
      s.answer(i % 2 === 0 ? "served" : "throttled", at + 2);
    }
    expect(s.control.ratePerSecond).toBe(Infinity);
    for (; at < 600; at += 10) {
      s.control.asked(at);
      s.control.sent(at);
      s.answer(at % 20 === 0 ? "served" : "throttled", at + 2);
    }
    expect(s.control.ratePerSecond).toBeGreaterThan(40);
    expect(s.control.ratePerSecond).toBeLessThan(60);
    expect(s.control.out).toBe(false);
  });

  it("cuts once per round: a throttle to an attempt sent before the last cut is no news", () => {
    const s = scope();
    serveSteadily(s, 0, 40, 10);
    // A first throttle in a second is only a note (a table being split throttles each range once); the second cuts.
    s.answer("throttled", 398);
    expect(s.control.ratePerSecond).toBe(Infinity);
    s.answer("throttled", 400);
    const rate = s.control.ratePerSecond;
    expect(rate).toBeLessThan(Infinity);
    // Sent at 390, before the cut at 400: no second cut, however many such answers come.
    for (let at = 401; at < 410; at++) {
      s.control.observe(true, "p", at);
      s.control.answer("throttled", 390, at, true);
    }
    expect(s.control.ratePerSecond).toBe(rate);
  });

  it("is never paced below a quarter of what its callers ask (a throttle that serves a share whatever the rate)", () => {
    const s = scope();
    let at = 0;
    // 200 asked a second; 1 in 20 served.
    for (let i = 0; at < 1_000; i++, at += 5) {
      s.control.asked(at);
      s.control.sent(at);
      s.answer(i % 20 === 0 ? "served" : "throttled", at + 1);
    }
    expect(s.control.out).toBe(false);
    expect(s.control.ratePerSecond).toBeGreaterThanOrEqual(DEMAND_SHARE * 200 * 0.9);
  });

  it("with pacing off, throttles teach no rate", () => {
    const s = scope({ ...PARTITION, pacing: false });
    let at = 0;
    for (let i = 0; at < 600; i++, at += 10) {
      s.control.sent(at);
      s.answer(i % 2 === 0 ? "served" : "throttled", at + 2);
    }
    expect(s.control.ratePerSecond).toBe(Infinity);
  });
});

describe("ScopeController: out (serves nothing)", () => {
  it("throttles in a row go out only once nothing was served for a quarter second", () => {
    const s = scope();
    serveSteadily(s, 0, 10, 10);
    // Served last at 92: five throttles within the quarter second after it are not out.
    for (let at = 100; at <= 140; at += 10) expect(s.answer("throttled", at)).toBeUndefined();
    expect(s.control.out).toBe(false);
    expect(s.answer("throttled", 92 + QUIET_IN_MS)).toBe("out");
    expect(s.control.out).toBe(true);
  });

  it("failures (resets, refused connections, lost attempts) go out at the fifth in a row, with no quiet quarter second", () => {
    const s = scope();
    serveSteadily(s, 0, 10, 10);
    for (let i = 0; i < 4; i++) expect(s.answer("failed", 100 + i)).toBeUndefined();
    expect(s.answer("failed", 104)).toBe("out");
  });

  it("a success between failures starts the count again", () => {
    const s = scope();
    for (let i = 0; i < 4; i++) s.answer("failed", 100 + i);
    s.answer("served", 110);
    for (let i = 0; i < 4; i++) s.answer("failed", 120 + i);
    expect(s.control.out).toBe(false);
  });

  it("while out, one probe per probe interval, the first an interval after it went out", () => {
    const s = scope();
    for (let i = 0; i < 5; i++) s.answer("failed", 1_000 + i);
    expect(s.control.out).toBe(true);
    expect(s.control.ratePerSecond).toBeCloseTo(1000 / 300);
    expect(s.control.nextSendAt(1_004, 0)).toBe(1_304);
    s.control.sent(1_304);
    expect(s.control.nextSendAt(1_305, 1)).toBe(1_604);
  });

  it("forgets the capacity it learnt: an outage teaches nothing of it", () => {
    const s = scope();
    serveSteadily(s, 0, 30, 10);
    s.answer("throttled", 298);
    s.answer("throttled", 300);
    const plateau = s.control.ratePerSecond;
    expect(plateau).toBeLessThan(200);
    for (let i = 0; i < 5; i++) s.answer("failed", 400 + i);
    s.answer("served", 800, 4);
    // Back at one attempt per round trip (the fastest known, 2 ms: 500/s), not the plateau learnt at 300.
    expect(s.control.ratePerSecond).toBe(500);
  });
});

describe("ScopeController: back", () => {
  function outThenBack(roundTripInMs = 2) {
    const s = scope();
    for (let i = 0; i < 5; i++) s.answer("failed", 100 + i);
    expect(s.answer("served", 500, roundTripInMs)).toBe("back");
    return s;
  }

  it("restarts at one attempt per round trip", () => {
    expect(outThenBack(2).control.ratePerSecond).toBe(500);
    expect(outThenBack(5).control.ratePerSecond).toBe(200);
  });

  it("doubles with each round trip while attempts wait for it and find no queue", () => {
    const s = outThenBack(2);
    s.control.sent(501);
    s.answer("served", 503, 2, true);
    expect(s.control.ratePerSecond).toBe(1000);
    s.control.sent(504);
    s.answer("served", 506, 2, true);
    expect(s.control.ratePerSecond).toBe(2000);
  });

  it("a throttle during its ramp halves it at once, with less than a quarter second measured since it came back", () => {
    const s = outThenBack(2);
    s.control.sent(501);
    s.answer("served", 503, 2, true);
    expect(s.control.ratePerSecond).toBe(1000);
    // 20 ms after coming back: what it served before and while out is no measure; the ramp is cut in half.
    s.answer("throttled", 520, 2, true);
    expect(s.control.ratePerSecond).toBe(500);
  });

  it("forgetLimit (its account went out): a partition's limit and capacity are forgotten; one out stays out", () => {
    const s = scope();
    serveSteadily(s, 0, 30, 10);
    s.answer("throttled", 298);
    s.answer("throttled", 300);
    expect(s.control.ratePerSecond).toBeLessThan(Infinity);
    s.control.forgetLimit(310);
    expect(s.control.ratePerSecond).toBe(Infinity);
    const out = scope();
    for (let i = 0; i < 5; i++) out.answer("failed", 100 + i);
    out.control.forgetLimit(110);
    expect(out.control.out).toBe(true);
  });

  it("does not grow on an answer that found a queue, nor on one to an attempt sent before the last change", () => {
    const s = outThenBack(2);
    s.answer("served", 520, 19, true);
    expect(s.control.ratePerSecond).toBe(500);
    s.control.answer("served", 499, 503, true);
    expect(s.control.ratePerSecond).toBe(500);
  });

  it("held back nobody: a rate past four times what its callers ask is no limit", () => {
    const s = outThenBack(2);
    s.control.asked(501);
    s.answer("served", 504, 2, false);
    expect(s.control.ratePerSecond).toBe(Infinity);
  });

  it("an answer that is no success (a 403, a 501) ends it, but ends no run of failures: the next throttle takes it out again", () => {
    const s = scope();
    for (let i = 0; i < 5; i++) s.answer("throttled", QUIET_IN_MS + i);
    expect(s.control.out).toBe(true);
    expect(s.answer("answered", 600)).toBe("back");
    expect(s.answer("throttled", 601)).toBe("out");
    // A success does end the run: five throttles are needed again.
    s.answer("served", 700);
    for (let i = 1; i < 5; i++) expect(s.answer("throttled", 700 + QUIET_IN_MS + i)).toBeUndefined();
    expect(s.answer("throttled", 705 + QUIET_IN_MS)).toBe("out");
  });
});

describe("ScopeController: past the capacity learnt", () => {
  it("doubles only after HOLD_ANSWERS answers served at the rate it holds", () => {
    const s = scope();
    serveSteadily(s, 0, 30, 10);
    s.answer("throttled", 298);
    s.answer("throttled", 300);
    const plateau = s.control.ratePerSecond;
    let at = 310;
    for (let i = 1; i < HOLD_ANSWERS; i++, at += 10) s.answer("served", at, 2, true);
    expect(s.control.ratePerSecond).toBe(plateau);
    s.answer("served", at, 2, true);
    expect(s.control.ratePerSecond).toBe(2 * plateau);
  });
});

describe("ScopeController: the window", () => {
  it("in flight at most twice the rate times the fastest round trip, at least one", () => {
    const s = scope(PARTITION, 10);
    for (let i = 0; i < 5; i++) s.answer("failed", 100 + i);
    s.answer("served", 200, 10);
    // 100/s × 10 ms × 2: two in flight.
    expect(s.control.window()).toBe(2);
    expect(s.control.nextSendAt(200, 1)).toBe(200);
    expect(s.control.nextSendAt(200, 2)).toBe(Infinity);
  });
});

describe("ScopeController: the evidence an account reads", () => {
  const ACCOUNT: ControllerSettings = { ...PARTITION, probeIntervalInMs: 100 };

  it("reads the spread of its last unserved answers of the last second", () => {
    const s = scope(ACCOUNT);
    for (const [from, at] of [["p1", 0], ["p2", 10], ["p3", 20]] as const) s.control.observe(true, from, at);
    expect(s.control.spreadAt(30)).toBe(3);
    expect(s.control.spreadAt(1_015)).toBe(1);
    // Three unserved answers of four, over about the last eight: a share of about a third.
    s.control.observe(false, "p4", 40);
    expect(s.control.unservedShare).toBeCloseTo(0.289, 3);
  });
});

describe("isAccountsEvidence: whose is a partition's unserved answer", () => {
  const ACCOUNT: ControllerSettings = { ...PARTITION, probeIntervalInMs: 100 };
  /** An account whose last answers were `unserved` of `of`, its failures from `partitions` partitions; limited when `limited`. */
  function account(unserved: number, of: number, partitions: number, limited = false): ScopeController {
    const control = new ScopeController(0, ACCOUNT);
    for (let i = 0; i < of; i++) control.observe(i < unserved, `p${i % partitions}`, 100 + i);
    if (limited) {
      for (let i = 0; i < 5; i++) control.answer("failed", -Infinity, 110 + i, false);
      control.answer("served", 118, 120, false);
    }
    return control;
  }
  /** A partition whose last `of` answers were `unserved` of them. */
  function partition(unserved: number, of: number): ScopeController {
    const control = new ScopeController(0, PARTITION);
    for (let i = 0; i < of; i++) control.observe(i >= of - unserved, "p0", 100 + i);
    return control;
  }

  it("the account's while it serves nothing, or with no partition to blame", () => {
    const out = account(6, 6, 1);
    for (let i = 0; i < 5; i++) out.answer("failed", 100, 110 + i, false);
    expect(out.out).toBe(true);
    expect(isAccountsEvidence(partition(8, 8), out, 120)).toBe(true);
    expect(isAccountsEvidence(undefined, account(1, 8, 1), 120)).toBe(true);
  });

  it("the partition's at its first failure, however spread the account's (a table being split throttles each range once)", () => {
    expect(isAccountsEvidence(partition(1, 8), account(8, 8, 8), 120)).toBe(false);
    expect(isAccountsEvidence(partition(2, 8), account(8, 8, 8), 120)).toBe(true);
  });

  it("the partition's when its failures come from fewer than three partitions (one hot key is no account's trouble)", () => {
    expect(isAccountsEvidence(partition(2, 8), account(8, 8, 2), 120)).toBe(false);
  });

  it("spread over three: the account's unless this partition fails more than twice as often as it, and more often than it serves", () => {
    expect(isAccountsEvidence(partition(3, 8), account(8, 16, 3), 120)).toBe(true);
    expect(isAccountsEvidence(partition(8, 8), account(3, 16, 3), 120)).toBe(false);
    // A few throttles in a row (a third of its last answers) against an account that mostly serves: still the account's.
    expect(isAccountsEvidence(partition(3, 8), account(3, 16, 3), 120)).toBe(true);
  });

  it("spread over three with the account limited already: the account's, however much this partition fails", () => {
    const limited = account(3, 16, 3, true);
    expect(limited.ratePerSecond).toBeLessThan(Infinity);
    expect(isAccountsEvidence(partition(8, 8), limited, 200)).toBe(true);
  });
});
