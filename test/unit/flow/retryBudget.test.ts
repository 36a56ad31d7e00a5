import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { createRetryBudget } from "../../../src/index.js";
import { DEFAULT_RETRY_BUDGET_OPTIONS } from "../../../src/flow/retryBudget.js";

function clock(start = 0) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

/** Spends retries until refused; returns how many were granted. */
function drain(budget: ReturnType<typeof createRetryBudget>, limit = 100_000): number {
  let granted = 0;
  while (granted < limit && budget.tryRetry()) granted++;
  return granted;
}

describe("createRetryBudget", () => {
  it("defaults: 50 % of requests plus 10 retries per second over 10 s", () => {
    expect(DEFAULT_RETRY_BUDGET_OPTIONS).toEqual({ retryRatio: 0.5, minRetriesPerSecond: 10, windowInMs: 10_000 });
    const c = clock();
    const budget = createRetryBudget({ now: c.now });
    expect(drain(budget)).toBe(100); // the reserve: 10/s x 10 s
    for (let i = 0; i < 50; i++) budget.recordRequest();
    expect(drain(budget)).toBe(25); // 50 % of 50
    expect(budget.snapshot()).toEqual({ requests: 50, retries: 125, available: 0 });
  });

  it("withdrawals and deposits expire with the window", () => {
    const c = clock();
    const budget = createRetryBudget({ now: c.now, minRetriesPerSecond: 1, windowInMs: 10_000 });
    expect(drain(budget)).toBe(10);
    c.advance(5_000);
    expect(budget.tryRetry()).toBe(false);
    c.advance(5_000);
    // The first bucket's withdrawals have expired.
    expect(drain(budget)).toBe(10);
  });

  it("takes the caller's clock reading for a request, unless it has a clock of its own", () => {
    // Default clock: a reading a window ago counts in a bucket that has already expired.
    const shared = createRetryBudget({ windowInMs: 1_000 });
    shared.recordRequest(performance.now() - 5_000);
    expect(shared.snapshot().requests).toBe(0);
    shared.recordRequest(performance.now());
    expect(shared.snapshot().requests).toBe(1);
    // Its own clock: the reading is ignored, the request counts now.
    const c = clock(10_000);
    const own = createRetryBudget({ now: c.now, windowInMs: 1_000 });
    own.recordRequest(0);
    expect(own.snapshot().requests).toBe(1);
  });

  it("a retry that succeeded gives its retry back, never more than the window spent", () => {
    const c = clock();
    const budget = createRetryBudget({ now: c.now, minRetriesPerSecond: 1, windowInMs: 10_000 });
    expect(drain(budget)).toBe(10);
    budget.refund?.();
    budget.refund?.();
    expect(budget.snapshot()).toEqual({ requests: 0, retries: 8, available: 2 });
    expect(drain(budget)).toBe(2);
    c.advance(10_000); // every withdrawal expired
    for (let i = 0; i < 5; i++) budget.refund?.();
    expect(budget.snapshot()).toEqual({ requests: 0, retries: 0, available: 10 });
  });

  it("a budget with no floor allows exactly the ratio", () => {
    const c = clock();
    const budget = createRetryBudget({ now: c.now, minRetriesPerSecond: 0, retryRatio: 0.1 });
    expect(budget.tryRetry()).toBe(false);
    for (let i = 0; i < 100; i++) budget.recordRequest();
    expect(drain(budget)).toBe(10);
  });

  it("a clock that steps back is held at its latest value", () => {
    const c = clock(50_000);
    const budget = createRetryBudget({ now: c.now, minRetriesPerSecond: 1 });
    expect(drain(budget)).toBe(10);
    c.advance(-40_000);
    expect(budget.tryRetry()).toBe(false);
  });

  it("property: whenever a retry is granted, retries in the window <= reserve + ratio x requests", () => {
    fc.assert(
      fc.property(
        fc.record({ ratio: fc.double({ min: 0, max: 1, noNaN: true }), perSecond: fc.integer({ min: 0, max: 20 }) }),
        fc.array(fc.record({ gapInMs: fc.integer({ min: 0, max: 3000 }), requests: fc.nat(20), retries: fc.nat(40) }), { maxLength: 60 }),
        ({ ratio, perSecond }, steps) => {
          const c = clock(1_000_000);
          const windowInMs = 10_000;
          const budget = createRetryBudget({ now: c.now, retryRatio: ratio, minRetriesPerSecond: perSecond, windowInMs });
          const log: Array<{ at: number; requests: number; retries: number }> = [];
          for (const step of steps) {
            c.advance(step.gapInMs);
            for (let i = 0; i < step.requests; i++) budget.recordRequest();
            let granted = 0;
            for (let i = 0; i < step.retries; i++) if (budget.tryRetry()) granted++;
            log.push({ at: c.now(), requests: step.requests, retries: granted });
          }
          const reserve = (perSecond * windowInMs) / 1000;
          const bucket = (at: number) => Math.floor(at / (windowInMs / 10));
          // Checked when retries were granted: later, old deposits may have left the window before the retries they paid for.
          for (const end of log.filter((e) => e.retries > 0)) {
            // The window is ten buckets: the current one and the nine before it.
            const inWindow = log.filter((e) => bucket(e.at) > bucket(end.at) - 10 && e.at <= end.at);
            const requests = inWindow.reduce((sum, e) => sum + e.requests, 0);
            const retries = inWindow.reduce((sum, e) => sum + e.retries, 0);
            expect(retries).toBeLessThanOrEqual(reserve + ratio * requests + 1e-9);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it.each([
    [{ retryRatio: -0.1 }, /^retryRatio.*-0\.1/],
    [{ retryRatio: Number.NaN }, /^retryRatio.*NaN/],
    [{ minRetriesPerSecond: "10" }, /^minRetriesPerSecond.*"10"/],
    [{ windowInMs: 0 }, /^windowInMs.*0/],
    [{ now: 5 }, /^now/],
    [{ ratio: 0.2 }, /^ratio is not a known option/],
  ])("rejects %o naming the option", (options, message) => {
    expect(() => createRetryBudget(options as never)).toThrow(message);
  });
});
