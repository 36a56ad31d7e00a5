import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createAttemptDeadlines } from "../../../src/timing/attemptDeadlines.js";

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("createAttemptDeadlines", () => {
  it("aborts each controller at its own deadline, on one timer", () => {
    const deadlines = createAttemptDeadlines();
    const armed = [0, 100, 200].map((offset) => {
      vi.advanceTimersByTime(offset === 0 ? 0 : 100);
      return deadlines.arm(new AbortController(), performance.now(), 300);
    });
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(99); // t = 299
    expect(armed.map((a) => a.controller?.signal.aborted)).toEqual([false, false, false]);
    vi.advanceTimersByTime(1); // 300
    expect(armed.map((a) => a.timedOut)).toEqual([true, false, false]);
    vi.advanceTimersByTime(100); // 400
    expect(armed.map((a) => a.timedOut)).toEqual([true, true, false]);
    vi.advanceTimersByTime(100); // 500
    expect(armed.map((a) => a.controller?.signal.aborted)).toEqual([true, true, true]);
    expect(deadlines.queued()).toBe(0);
  });

  it("a released deadline never aborts, and the timer left behind stops at its firing", () => {
    const deadlines = createAttemptDeadlines();
    const controller = new AbortController();
    const armed = deadlines.arm(controller, performance.now(), 300);
    deadlines.release(armed);
    expect(deadlines.queued()).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(controller.signal.aborted).toBe(false);
    expect(armed.timedOut).toBe(false);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("a steady stream of quick attempts costs one timer, not one each", () => {
    const deadlines = createAttemptDeadlines();
    const setTimeoutSpy = vi.spyOn(globalThis, "setTimeout");
    for (let i = 0; i < 1_000; i++) {
      deadlines.release(deadlines.arm(new AbortController(), performance.now(), 30_000));
      vi.advanceTimersByTime(1);
    }
    expect(setTimeoutSpy).toHaveBeenCalledTimes(1);
    expect(deadlines.queued()).toBe(0);
  });

  it("an earlier deadline than the newest queued one gets a timer of its own", () => {
    const deadlines = createAttemptDeadlines();
    const long = deadlines.arm(new AbortController(), performance.now(), 1_000);
    const short = deadlines.arm(new AbortController(), performance.now(), 100);
    vi.advanceTimersByTime(100);
    expect(short.timedOut).toBe(true);
    expect(long.timedOut).toBe(false);
    vi.advanceTimersByTime(900);
    expect(long.timedOut).toBe(true);
  });

  it("releases out of order: behind a hung attempt, released deadlines are dropped in bulk, not held until it expires", () => {
    const deadlines = createAttemptDeadlines();
    const hung = deadlines.arm(new AbortController(), performance.now(), 30_000);
    const released = [];
    let mostQueued = 0;
    for (let i = 0; i < 100_000; i++) {
      const armed = deadlines.arm(new AbortController(), performance.now(), 30_000);
      deadlines.release(armed);
      released.push(armed);
      mostQueued = Math.max(mostQueued, deadlines.queued());
    }
    // Bounded by the live attempts (one) plus the compaction threshold (1024), not by the request count.
    expect(mostQueued).toBeLessThanOrEqual(1 + 1024);
    // Waiting in the queue, they no longer hold their attempts' controllers.
    expect(released.every((armed) => armed.controller === undefined)).toBe(true);
    expect(hung.controller).toBeDefined();
    vi.advanceTimersByTime(30_000);
    expect(hung.timedOut).toBe(true);
    expect(released.some((armed) => armed.timedOut)).toBe(false);
    expect(deadlines.queued()).toBe(0);
  });

  it("with many attempts in flight and one hung, live ones still time out in order and released ones never do", () => {
    const deadlines = createAttemptDeadlines();
    const hung = deadlines.arm(new AbortController(), performance.now(), 1_000);
    const live = [];
    const released = [];
    for (let i = 0; i < 5_000; i++) {
      vi.advanceTimersByTime(i % 100 === 0 ? 1 : 0);
      const armed = deadlines.arm(new AbortController(), performance.now(), 1_000);
      if (i % 3 === 0) live.push(armed);
      else {
        deadlines.release(armed);
        released.push(armed);
      }
    }
    expect(deadlines.queued()).toBeLessThanOrEqual(2 * (live.length + 1) + 1024);
    vi.advanceTimersByTime(1_000);
    expect(hung.timedOut).toBe(true);
    expect(live.every((armed) => armed.timedOut && armed.controller?.signal.aborted)).toBe(true);
    expect(released.some((armed) => armed.timedOut)).toBe(false);
    expect(deadlines.queued()).toBe(0);
  });
});
