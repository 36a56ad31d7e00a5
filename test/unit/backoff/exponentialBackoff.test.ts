import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { exponentialBackoff } from "../../../src/index.js";
import { exponentialDelayInMs } from "../../../src/backoff/exponentialBackoff.js";

const guideExample = { baseDelayInMs: 1000, minDelayInMs: 100, maxDelayInMs: 30_000, maxRetries: 10 };

describe("exponentialBackoff: the storage guidance's worked example", () => {
  it("retry 3 is 5700 ms at the low end of the random range", () => {
    expect(exponentialBackoff({ ...guideExample, random: () => 0 }).delayInMs(3)).toBe(5700);
  });

  it("retry 3 is 8500 ms at the high end", () => {
    expect(exponentialBackoff({ ...guideExample, random: () => 1 }).delayInMs(3)).toBe(8500);
  });

  it("retry 6 caps at 30000 ms", () => {
    expect(exponentialBackoff({ ...guideExample, random: () => 0 }).delayInMs(6)).toBe(30_000);
  });

  it("produces the table of delays at the midpoint (no variance)", () => {
    const strategy = exponentialBackoff({ ...guideExample, random: () => 0.5 });
    expect([1, 2, 3, 4, 5, 6].map((x) => strategy.delayInMs(x))).toEqual([1100, 3100, 7100, 15_100, 30_000, 30_000]);
  });

  it("with jitter 0 ignores the random source", () => {
    const strategy = exponentialBackoff({ ...guideExample, jitter: 0, random: () => 0.9 });
    expect(strategy.delayInMs(2)).toBe(3100);
  });
});

describe("exponentialBackoff: bounds", () => {
  it("every delay lies within [min, max] for any retry number and random value", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.double({ min: 0, max: 0.99, noNaN: true }),
        (retry, randomValue, base, min, extra, jitter) => {
          const max = min + extra;
          const delay = exponentialBackoff({
            baseDelayInMs: base,
            minDelayInMs: min,
            maxDelayInMs: max,
            jitter,
            maxRetries: 10,
            random: () => randomValue,
          }).delayInMs(retry);
          return delay >= min && delay <= max && Number.isFinite(delay);
        },
      ),
    );
  });

  it("never yields NaN for a zero base at a huge retry number", () => {
    expect(exponentialDelayInMs(5000, { base: 0, min: 10, max: 20, jitter: 0.2, randomValue: 0.5 })).toBe(10);
  });

  it("rejects retry numbers below 1", () => {
    expect(() => exponentialBackoff().delayInMs(0)).toThrow(RangeError);
    expect(() => exponentialBackoff().delayInMs(1.5)).toThrow(/retryNumber/);
  });
});

describe("exponentialBackoff: validation names the option and value", () => {
  it.each([
    [{ maxRetries: -1 }, RangeError, /maxRetries.*-1/],
    [{ maxRetries: 1.5 }, RangeError, /maxRetries.*1\.5/],
    [{ baseDelayInMs: Number.NaN }, TypeError, /baseDelayInMs.*NaN/],
    [{ minDelayInMs: 5000, maxDelayInMs: 100 }, RangeError, /minDelayInMs \(5000\).*maxDelayInMs \(100\)/],
    [{ jitter: 1 }, RangeError, /jitter.*1/],
    [{ jitter: -0.1 }, RangeError, /jitter/],
    [{ maxDelayInMs: "10" }, TypeError, /maxDelayInMs.*"10"/],
    [{ random: 3 }, TypeError, /random/],
    [{ maxDelay: 10 }, TypeError, /^maxDelay is not a known option of exponentialBackoff;/],
  ])("%o", (options, type, message) => {
    expect(() => exponentialBackoff(options as never)).toThrow(type);
    expect(() => exponentialBackoff(options as never)).toThrow(message);
  });

  it("has documented defaults", () => {
    const strategy = exponentialBackoff({ random: () => 0 });
    expect(strategy.maxRetries).toBe(6);
    expect(strategy.maxDelayInMs).toBe(10_000);
    expect(strategy.delayInMs(1)).toBe(100 + 640);
  });
});
