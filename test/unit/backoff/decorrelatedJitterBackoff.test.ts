import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decorrelatedJitterBackoff } from "../../../src/index.js";
import { createRetryStrategy } from "../../../src/backoff/createRetryStrategy.js";
import { decorrelatedDelayInMs } from "../../../src/backoff/decorrelatedJitterBackoff.js";
import { mulberry32 } from "../../../src/testing/simulator/mulberry32.js";

/** Feeds each answer back as the next call's previous wait, as the retry policy does. */
function durations(strategy: ReturnType<typeof decorrelatedJitterBackoff>, count: number): number[] {
  const waits: number[] = [];
  let previous = 0;
  for (let retry = 1; retry <= count; retry++) {
    previous = strategy.delayInMs(retry, previous);
    waits.push(previous);
  }
  return waits;
}

describe("decorrelatedJitterBackoff: the formula", () => {
  it("draws the first wait from [base, 3 base]", () => {
    const options = { baseDelayInMs: 100, maxDelayInMs: 10_000 };
    expect(decorrelatedJitterBackoff({ ...options, random: () => 0 }).delayInMs(1)).toBe(100);
    expect(decorrelatedJitterBackoff({ ...options, random: () => 1 }).delayInMs(1)).toBe(300);
    expect(decorrelatedJitterBackoff({ ...options, random: () => 0.5 }).delayInMs(1)).toBe(200);
  });

  it("grows from the previous wait, not from the retry number", () => {
    const strategy = decorrelatedJitterBackoff({ baseDelayInMs: 100, maxDelayInMs: 100_000, random: () => 1 });
    // At the top of the range every wait is three times the last: 300, 900, 2700, 8100.
    expect(durations(strategy, 4)).toEqual([300, 900, 2700, 8100]);
    expect(strategy.delayInMs(4, 300)).toBe(900);
  });

  it("draws under the cap instead of clamping to it, so waits do not pile up at the cap", () => {
    // previous 5000: the range is [100, min(15000, 6000)] = [100, 6000]; the middle is 3050, not the cap.
    expect(decorrelatedDelayInMs(5000, { base: 100, max: 6000, randomValue: 0.5 })).toBe(3050);
    expect(decorrelatedDelayInMs(5000, { base: 100, max: 6000, randomValue: 1 })).toBe(6000);
  });

  it("reads a missing, too small or non-finite previous wait as base", () => {
    const p = { base: 200, max: 10_000, randomValue: 1 };
    expect(decorrelatedDelayInMs(0, p)).toBe(600);
    expect(decorrelatedDelayInMs(50, p)).toBe(600);
    expect(decorrelatedDelayInMs(Number.NaN, p)).toBe(600);
    expect(decorrelatedDelayInMs(Infinity, p)).toBe(600);
  });

  it("a seeded source gives the same sequence every time", () => {
    const make = () => decorrelatedJitterBackoff({ baseDelayInMs: 50, maxDelayInMs: 5000, random: mulberry32(7) });
    const first = durations(make(), 6);
    expect(durations(make(), 6)).toEqual(first);
    expect(new Set(first).size).toBeGreaterThan(1);
  });

  it("every wait lies in [base, max] whatever the previous wait and the draw", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 200_000 }),
        fc.double({ min: -1e9, max: 1e9, noNaN: true }),
        fc.double({ min: -2, max: 3, noNaN: true }),
        (base, extra, previous, randomValue) => {
          const max = base + extra;
          const delay = decorrelatedDelayInMs(previous, { base, max, randomValue });
          return Number.isInteger(delay) && delay >= base && delay <= max;
        },
      ),
    );
  });
});

describe("decorrelatedJitterBackoff: options", () => {
  it("has the exponential defaults' scale: 6 retries, 800 ms base, 10 s cap", () => {
    const strategy = decorrelatedJitterBackoff({ random: () => 0 });
    expect(strategy).toMatchObject({ kind: "decorrelated", maxRetries: 6, maxDelayInMs: 10_000 });
    expect(strategy.delayInMs(1)).toBe(800);
  });

  it("is made by name", () => {
    const strategy = createRetryStrategy({ strategy: "decorrelated", maxRetries: 2, baseDelayInMs: 10, maxDelayInMs: 20, random: () => 1 });
    expect(strategy).toMatchObject({ kind: "decorrelated", maxRetries: 2, maxDelayInMs: 20 });
    expect(strategy.delayInMs(1)).toBe(20);
  });

  it.each([
    [{ baseDelayInMs: null }, TypeError, /baseDelayInMs must be a number; got null/],
    [{ maxDelayInMs: -1 }, RangeError, /maxDelayInMs must be between 0 and .*; got -1/],
    [{ baseDelayInMs: 0 }, RangeError, /baseDelayInMs must be between 1 and .*; got 0/],
    [{ maxRetries: 1.5 }, RangeError, /maxRetries must be an integer; got 1\.5/],
    [{ baseDelayInMs: 500, maxDelayInMs: 100 }, RangeError, /baseDelayInMs \(500\) must not exceed maxDelayInMs \(100\)/],
    [{ random: 3 }, TypeError, /random must be a function/],
    [{ jitter: 0.2 }, TypeError, /^jitter is not a known option of decorrelatedJitterBackoff; known options are/],
  ])("rejects %j", (options, type, message) => {
    expect(() => decorrelatedJitterBackoff(options as never)).toThrow(type);
    expect(() => decorrelatedJitterBackoff(options as never)).toThrow(message);
  });

  it("rejects null options", () => {
    expect(() => decorrelatedJitterBackoff(null as never)).toThrow(/decorrelatedJitterBackoff options must be an object; got null/);
  });

  it("rejects a retry number below 1", () => {
    expect(() => decorrelatedJitterBackoff().delayInMs(0)).toThrow(RangeError);
  });
});
