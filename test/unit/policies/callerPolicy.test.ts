import { afterEach, describe, expect, it, vi } from "vitest";
import { CallerPolicy, reserveOf, resolveCallerOptions, type Waiter } from "../../../src/policies/callerPolicy.js";
import { logger } from "../../../src/logging/logger.js";

afterEach(() => {
  vi.restoreAllMocks();
});

function bounded(concurrency: number, now?: () => number): CallerPolicy {
  return new CallerPolicy(resolveCallerOptions({ concurrency }), now);
}

/** `n` operations started; returns the policy for chaining. */
function start(policy: CallerPolicy, n: number): CallerPolicy {
  for (let i = 0; i < n; i++) policy.started();
  return policy;
}

describe("resolveCallerOptions", () => {
  it("defaults to an open loop; failFast and concurrency declare the others", () => {
    expect(resolveCallerOptions(undefined)).toEqual({ kind: "open" });
    expect(resolveCallerOptions({})).toEqual({ kind: "open" });
    expect(resolveCallerOptions({ failFast: false })).toEqual({ kind: "open" });
    expect(resolveCallerOptions({ failFast: true })).toEqual({ kind: "failFast" });
    expect(resolveCallerOptions({ concurrency: 16 })).toEqual({ kind: "bounded", concurrency: 16 });
  });

  it.each<[unknown, RegExp]>([
    [null, /caller must be an options object.*got null/],
    [16, /caller must be an options object/],
    [{ concurrency: 0 }, /caller\.concurrency must be between 1 and/],
    [{ concurrency: 2.5 }, /caller\.concurrency must be an integer; got 2\.5/],
    [{ concurrency: null }, /caller\.concurrency must be a number; got null/],
    [{ failFast: "yes" }, /caller\.failFast must be a boolean; got "yes"/],
    [{ concurrency: 4, failFast: true }, /caller\.concurrency and caller\.failFast exclude each other/],
    [{ workers: 4 }, /workers/],
  ])("rejects %o", (option, message) => {
    expect(() => resolveCallerOptions(option)).toThrow(message);
  });
});

describe("CallerPolicy counts", () => {
  it("counts operations in flight and waiters by reason; a waiter changing reason keeps one count", () => {
    const policy = start(new CallerPolicy(), 3);
    const a = policy.beginWait("circuit");
    const b = policy.beginWait("budget");
    expect(policy.inFlight).toBe(3);
    expect([policy.waiting(), policy.waiting("circuit"), policy.waiting("budget"), policy.waiting("pacing")]).toEqual([2, 1, 1, 0]);
    policy.changeReason(b, "backoff");
    expect([policy.waiting(), policy.waiting("budget"), policy.waiting("backoff")]).toEqual([2, 0, 1]);
    policy.endWait(a);
    policy.endWait(a);
    policy.endWait(b);
    policy.ended();
    expect([policy.inFlight, policy.waiting(), policy.waiting("circuit"), policy.waiting("backoff")]).toEqual([2, 0, 0, 0]);
  });

  it("an open loop may always wait and is never let go", () => {
    const policy = start(new CallerPolicy(), 100);
    const waiters: Waiter[] = [];
    for (let i = 0; i < 99; i++) waiters.push(policy.beginWait("circuit"));
    expect(policy.mayStartWait("circuit")).toBe(true);
    expect(waiters.every((w) => policy.mayKeepWaiting(w, "circuit") && !policy.mustRelease(w))).toBe(true);
  });

  it("a failFast caller never waits at a local refusal, and sleeps its backoffs", () => {
    const policy = start(new CallerPolicy(resolveCallerOptions({ failFast: true })), 1);
    expect(["circuit", "pacing", "budget"].map((r) => policy.mayStartWait(r as never))).toEqual([false, false, false]);
    expect(policy.mayStartWait("backoff")).toBe(true);
    const waiter = policy.beginWait("backoff");
    expect(policy.mayKeepWaiting(waiter, "backoff")).toBe(true);
    expect(policy.mayKeepWaiting(waiter, "circuit")).toBe(false);
  });
});

describe("CallerPolicy for a bounded caller", () => {
  it.each([
    [1, 1],
    [4, 1],
    [16, 2],
    [64, 6],
  ])("N = %i keeps a reserve of %i", (n, reserve) => {
    expect(reserveOf(n)).toBe(reserve);
  });

  it.each([1, 4, 16, 64])("N = %i: a wait may start while in flight (itself and the waiters included) is at most N - R", (n) => {
    const room = n - reserveOf(n);
    const policy = bounded(n);
    for (let i = 1; i <= n; i++) {
      policy.started();
      expect(policy.mayStartWait("circuit")).toBe(i <= room);
      expect(policy.mayStartWait("backoff")).toBe(i <= room);
    }
  });

  it.each([4, 16, 64])("N = %i: waiters fill the spare slots, never the reserve; healthy work arriving lets the newest go first", (n) => {
    const room = n - reserveOf(n);
    const policy = bounded(n);
    // Every waiter that may start does: one operation each, all waiting.
    const waiters: Waiter[] = [];
    while (true) {
      policy.started();
      if (!policy.mayStartWait("circuit")) {
        policy.ended();
        break;
      }
      waiters.push(policy.beginWait("circuit"));
    }
    expect(waiters).toHaveLength(room);
    expect(waiters.some((w) => policy.mustRelease(w))).toBe(false);
    // Healthy work takes a slot: exactly the newest waiter must go, then the next newest.
    policy.started();
    expect(waiters.map((w) => policy.mustRelease(w))).toEqual(waiters.map((_, i) => i === room - 1));
    policy.started();
    expect(waiters.map((w) => policy.mustRelease(w))).toEqual(waiters.map((_, i) => i >= room - 2));
    // The released waiters leave; the rest keep their places.
    policy.endWait(waiters[room - 1]!);
    policy.ended();
    policy.endWait(waiters[room - 2]!);
    policy.ended();
    expect(waiters.slice(0, room - 2).some((w) => policy.mustRelease(w))).toBe(false);
  });

  it("N = 1: the only slot is the reserve, so nothing ever waits", () => {
    const policy = bounded(1);
    policy.started();
    expect(policy.mayStartWait("circuit")).toBe(false);
    expect(policy.mayStartWait("backoff")).toBe(false);
  });

  it("a waiter that changes reason keeps its rank", () => {
    const policy = start(bounded(16), 3);
    const first = policy.beginWait("backoff");
    const second = policy.beginWait("circuit");
    policy.changeReason(first, "circuit");
    // 14 room, 1 busy: 13 may wait; take 12 healthy slots more so that only one may.
    start(policy, 12);
    expect(policy.mustRelease(first)).toBe(false);
    expect(policy.mustRelease(second)).toBe(true);
  });
});

describe("CallerPolicy: a bounded caller's tracked units of work", () => {
  it("counts a worker busy outside the client as a slot in use: with every slot in tracked work, nothing may wait", async () => {
    const policy = bounded(16);
    let finish: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (finish = resolve));
    // 16 workers, each in a unit of work; one of them is in the client, the rest busy elsewhere.
    const units = Array.from({ length: 16 }, () => policy.track(() => held));
    start(policy, 1);
    expect(policy.mayStartWait("circuit")).toBe(false);
    finish();
    await Promise.all(units);
    // The units done: the one operation in flight leaves 14 slots (N - R = 14) to wait in.
    expect(policy.mayStartWait("circuit")).toBe(true);
  });

  it("lets the newest waiter go when tracked work takes its slot, and answers what the unit answers", async () => {
    const policy = bounded(4);
    start(policy, 3);
    const waiters: Waiter[] = [policy.beginWait("circuit"), policy.beginWait("circuit"), policy.beginWait("circuit")];
    expect(waiters.map((w) => policy.mustRelease(w))).toEqual([false, false, false]);
    let finish: () => void = () => undefined;
    const unitsOutside = Array.from({ length: 4 }, () => policy.track(() => new Promise<string>((resolve) => (finish = () => resolve("done")))));
    // 4 units under way, 3 of them waiting in the client: 1 slot busy, N - R - 1 = 2 may wait.
    expect(waiters.map((w) => policy.mustRelease(w))).toEqual([false, false, true]);
    finish();
    await expect(unitsOutside[3]).resolves.toBe("done");
    await expect(policy.track(async () => {
      throw new Error("the unit's own error");
    })).rejects.toThrow("the unit's own error");
  });
});

describe("CallerPolicy: the starved-pool warning of an open loop", () => {
  it("logs once, naming caller: { concurrency: N }, when most operations in flight wait for 2 s while in flight stops growing", () => {
    const warning = vi.spyOn(logger, "warning").mockImplementation(() => undefined);
    let now = 0;
    const policy = new CallerPolicy(undefined, () => now);
    start(policy, 8);
    const waiters = Array.from({ length: 6 }, () => policy.beginWait("circuit"));
    now = 1_000;
    expect(policy.mayKeepWaiting(waiters[0]!, "circuit")).toBe(true);
    expect(warning).not.toHaveBeenCalled();
    now = 2_100;
    policy.mayKeepWaiting(waiters[0]!, "circuit");
    now = 5_000;
    policy.mayKeepWaiting(waiters[1]!, "circuit");
    expect(warning).toHaveBeenCalledTimes(1);
    expect(String(warning.mock.calls[0]![0])).toMatch(/caller: \{ concurrency: N \}/);
  });

  it("stays quiet while in flight keeps growing (an open loop's arrivals go on)", () => {
    const warning = vi.spyOn(logger, "warning").mockImplementation(() => undefined);
    let now = 0;
    const policy = new CallerPolicy(undefined, () => now);
    for (let t = 0; t < 10_000; t += 250) {
      now = t;
      policy.started();
      policy.beginWait("circuit");
    }
    expect(warning).not.toHaveBeenCalled();
  });

  it("a bounded or failFast caller never warns", () => {
    const warning = vi.spyOn(logger, "warning").mockImplementation(() => undefined);
    let now = 0;
    for (const policy of [bounded(8, () => now), new CallerPolicy(resolveCallerOptions({ failFast: true }), () => now)]) {
      start(policy, 8);
      const waiter = policy.beginWait("backoff");
      now += 10_000;
      policy.mayKeepWaiting(waiter, "backoff");
    }
    expect(warning).not.toHaveBeenCalled();
  });
});
