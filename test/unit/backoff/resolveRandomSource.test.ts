import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { clampUnitRandom, resolveRandomSource } from "../../../src/backoff/retryStrategy.js";
import { exponentialBackoff, resilientRetryPolicy } from "../../../src/index.js";
import { type AttemptGate } from "../../../src/breaker/attemptGate.js";
import { asGateOption } from "../../support/scriptedGate.js";

// A `random` option answering outside [0, 1] is clamped where it enters (issue 17, item 7):
// NaN or a negative draw used to make open-circuit waits poll every millisecond past the deadline.

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

describe("resilientRetryPolicy open-circuit waits with a bad random source", () => {
  const RETRY_AFTER_IN_MS = 1_000;
  const MAX_ELAPSED_IN_MS = 10_000;

  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A gate whose circuit never closes: each refusal says "next probe in 1 s". */
  function alwaysOpen(): AttemptGate & { refusals: number } {
    return {
      refusals: 0,
      admit() {
        this.refusals += 1;
        return { decision: "refuse", reason: "circuit-open", scope: "table|acct|orders|p1", retryAfterInMs: RETRY_AFTER_IN_MS };
      },
      record() {},
    };
  }

  it.each(BAD_DRAWS)("%s: each wait is within [t, 2t] and the operation ends by its deadline", async (_name, draw) => {
    const gate = alwaysOpen();
    const next = vi.fn<SendRequest>(async (request) => ({ request, status: 200, headers: createHttpHeaders() }) satisfies PipelineResponse);
    const policy = resilientRetryPolicy({ gate: asGateOption(gate), maxElapsedInMs: MAX_ELAPSED_IN_MS, random: () => draw });
    const request = createPipelineRequest({ url: "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')" });
    let settled = false;
    const pending = policy.sendRequest(request, next).then(
      () => (settled = true),
      () => (settled = true),
    );
    await vi.advanceTimersByTimeAsync(MAX_ELAPSED_IN_MS);
    expect(settled).toBe(true);
    await pending;
    // Waits of t to 2t over a 10 s deadline: between 5 and 10 refusals, plus the first one.
    expect(gate.refusals).toBeGreaterThanOrEqual(MAX_ELAPSED_IN_MS / (2 * RETRY_AFTER_IN_MS));
    expect(gate.refusals).toBeLessThanOrEqual(MAX_ELAPSED_IN_MS / RETRY_AFTER_IN_MS + 1);
    expect(next).not.toHaveBeenCalled();
  });
});
