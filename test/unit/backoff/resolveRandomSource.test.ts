import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { clampUnitRandom, resolveRandomSource } from "../../../src/backoff/retryStrategy.js";
import { exponentialBackoff, fixedBackoff, resilientRetryPolicy, type RetryBudget } from "../../../src/index.js";
import { BUDGET_POLL_IN_MS } from "../../../src/policies/decideNext.js";

// A `random` option answering outside [0, 1] is clamped where it enters (issue 17, item 7):
// NaN or a negative draw used to make open-circuit waits poll every millisecond past the deadline.
// Circuit waits draw nothing now (a scope's queue wakes its waiters at their turn); the budget's
// polls still do.

const BAD_DRAWS: Array<[string, number]> = [
  ["NaN", Number.NaN],
  ["a negative number", -0.5],
  ["1", 1],
  ["a number above 1", 5],
  ["Infinity", Infinity],
  ["-Infinity", -Infinity],
];

describe("clampUnitRandom", () => {
  it.each([
    [0.25, 0.25],
    [0, 0],
    [1, 1],
    [-0.5, 0],
    [5, 1],
    [Number.NaN, 0.5],
    [Infinity, 0.5],
    ["0.3", 0.5],
    [undefined, 0.5],
  ])("%s reads as %s", (draw, expected) => {
    expect(clampUnitRandom(draw)).toBe(expected);
  });
});

describe("resolveRandomSource", () => {
  it("keeps Math.random as is and clamps a user's function", () => {
    expect(resolveRandomSource("random", undefined)).toBe(Math.random);
    expect(resolveRandomSource("random", Math.random)).toBe(Math.random);
    const draws = [Number.NaN, -3, 7, 0.4];
    const source = resolveRandomSource("random", () => draws.shift());
    expect([source(), source(), source(), source()]).toEqual([0.5, 0, 1, 0.4]);
  });

  it.each([null, 0.5, "x", 1n])("rejects %s naming the option", (bad) => {
    expect(() => resolveRandomSource("random", bad)).toThrow(TypeError);
    expect(() => resolveRandomSource("random", bad)).toThrow(/^random must be a function/);
  });
});

describe("exponentialBackoff with a bad random source", () => {
  it.each(BAD_DRAWS)("%s: every delay stays in [min, max]", (_name, draw) => {
    const strategy = exponentialBackoff({ baseDelayInMs: 800, minDelayInMs: 100, maxDelayInMs: 10_000, random: () => draw });
    for (let retry = 1; retry <= 6; retry++) {
      const delay = strategy.delayInMs(retry);
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(100);
      expect(delay).toBeLessThanOrEqual(10_000);
    }
  });
});

describe("resilientRetryPolicy budget waits with a bad random source", () => {
  const MAX_ELAPSED_IN_MS = 10_000;
  /** An empty budget is asked again within [t, 2t] of this, drawn (a circuit wait is drawn from nothing: its scope's queue wakes it). */
  const t = BUDGET_POLL_IN_MS;

  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it.each(BAD_DRAWS)("%s: each wait is within [t, 2t] and the operation ends by its deadline", async (_name, draw) => {
    // A budget that never grants a retry: the retry is deferred, and the budget asked again, until the deadline.
    const asks: number[] = [];
    const budget: RetryBudget = {
      recordRequest: () => undefined,
      tryRetry: () => {
        asks.push(Date.now());
        // A wait of 0 would spin at one instant of the fake clock: stopped here, it fails below.
        if (asks.length > (10 * MAX_ELAPSED_IN_MS) / t) throw new Error("the budget is asked in a spin");
        return false;
      },
      snapshot: () => ({ requests: 0, retries: 0, available: 0 }),
      retryAfterInMs: () => 1_000,
    };
    const next = vi.fn<SendRequest>(async (request) => ({ request, status: 503, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) }) satisfies PipelineResponse);
    const policy = resilientRetryPolicy({ retryBudget: budget, retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }), maxElapsedInMs: MAX_ELAPSED_IN_MS, random: () => draw });
    const request = createPipelineRequest({ url: "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')" });
    const start = Date.now();
    let settled = false;
    const pending = policy.sendRequest(request, next).then(
      () => (settled = true),
      () => (settled = true),
    );
    await vi.advanceTimersByTimeAsync(MAX_ELAPSED_IN_MS);
    expect(settled).toBe(true);
    await pending;
    expect(next).toHaveBeenCalledTimes(1);
    // Every wait that began with room for a whole one before the deadline (near it, a wait is cut to half the time left).
    const gaps = asks.slice(1).map((at, i) => ({ from: (asks[i] as number) - start, inMs: at - (asks[i] as number) }));
    const whole = gaps.filter((gap) => gap.from + 2 * t <= MAX_ELAPSED_IN_MS);
    expect(whole.length).toBeGreaterThanOrEqual((MAX_ELAPSED_IN_MS - 2 * t) / (2 * t) - 1);
    for (const gap of whole) {
      expect(gap.inMs).toBeGreaterThanOrEqual(t);
      expect(gap.inMs).toBeLessThanOrEqual(2 * t);
    }
  });
});
