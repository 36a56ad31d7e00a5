import { describe, expect, it } from "vitest";
import { decorrelatedJitterBackoff, exponentialBackoff, fixedBackoff } from "../../../src/index.js";
import { createRetryStrategy, noRetry } from "../../../src/backoff/createRetryStrategy.js";

describe("fixedBackoff", () => {
  it("waits the same time before every retry", () => {
    const strategy = fixedBackoff({ maxRetries: 4, delayInMs: 250 });
    expect(strategy.kind).toBe("fixed");
    expect(strategy.maxRetries).toBe(4);
    expect([1, 2, 3, 4].map((x) => strategy.delayInMs(x))).toEqual([250, 250, 250, 250]);
  });

  it("defaults to 3 retries of 1000 ms", () => {
    const strategy = fixedBackoff();
    expect([strategy.maxRetries, strategy.delayInMs(1)]).toEqual([3, 1000]);
  });

  it("rejects bad numbers by name", () => {
    expect(() => fixedBackoff({ delayInMs: -5 })).toThrow(/delayInMs.*-5/);
    expect(() => fixedBackoff({ maxRetries: Infinity })).toThrow(/maxRetries/);
  });
});

describe("noRetry", () => {
  it("allows no retries", () => {
    expect(noRetry().maxRetries).toBe(0);
    expect(noRetry().kind).toBe("none");
  });
});

describe("createRetryStrategy", () => {
  it("builds each strategy by name", () => {
    expect(createRetryStrategy({ strategy: "none" }).kind).toBe("none");
    expect(createRetryStrategy({ strategy: "fixed", delayInMs: 5 }).delayInMs(1)).toBe(5);
    const exponential = createRetryStrategy({ strategy: "exponential", baseDelayInMs: 1000, minDelayInMs: 0, jitter: 0 });
    expect(exponential.delayInMs(2)).toBe(3000);
  });

  it("passes a strategy object through", () => {
    const strategy = fixedBackoff();
    expect(createRetryStrategy(strategy)).toBe(strategy);
  });

  it("names a bad strategy", () => {
    expect(() => createRetryStrategy({ strategy: "linear" } as never)).toThrow(/retry\.strategy.*"linear"/);
    expect(() => createRetryStrategy(null as never)).toThrow(TypeError);
    expect(() => createRetryStrategy({ strategy: "none", maxRetries: 3 } as never)).toThrow(/takes no other options/);
  });

  it("names each option of a config by its dotted path (retry.maxDelayInMs, or under the name given)", () => {
    expect(() => createRetryStrategy({ strategy: "exponential", maxDelayInMs: -1 })).toThrow(new RangeError("retry.maxDelayInMs must be between 0 and 86400000; got -1."));
    expect(() => createRetryStrategy({ strategy: "fixed", delayInMs: null } as never)).toThrow(/^retry\.delayInMs must be a number; got null\.$/);
    expect(() => createRetryStrategy({ strategy: "decorrelated", baseDelayInMs: 0 }, "backoff.throttled")).toThrow(/^backoff\.throttled\.baseDelayInMs must be between 1/);
    expect(() => createRetryStrategy({ strategy: "exponential", minDelayInMs: 5, maxDelayInMs: 1 })).toThrow(/^retry\.minDelayInMs \(5\) must not exceed retry\.maxDelayInMs \(1\)/);
    expect(() => createRetryStrategy({ strategy: "fixed", delay: 1 } as never)).toThrow(/^retry\.delay is not a known option of retry \(a fixed backoff\); did you mean delayInMs\? Known options are maxRetries, delayInMs\.$/);
    expect(() => createRetryStrategy({ strategy: "none", maxRetries: 1 } as never)).toThrow(/^retry\.maxRetries is not an option of strategy "none"/);
    // A strategy function called directly names its options bare, as its caller wrote them.
    expect(() => fixedBackoff({ delayInMs: -1 })).toThrow(/^delayInMs must be between/);
  });
});

describe("every strategy's delayInMs", () => {
  it.each([
    ["fixed", fixedBackoff()],
    ["exponential", exponentialBackoff()],
    ["decorrelated", decorrelatedJitterBackoff()],
  ])("%s refuses a retry number that is not a whole number >= 1", (_, strategy) => {
    for (const retryNumber of [0, -1, 1.5, Number.NaN]) {
      expect(() => strategy.delayInMs(retryNumber), String(retryNumber)).toThrow(new RangeError(`retryNumber must be an integer >= 1; got ${retryNumber}.`));
    }
    expect(strategy.delayInMs(1)).toBeGreaterThanOrEqual(0);
  });
});
