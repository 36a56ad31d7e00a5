import { describe, expect, it } from "vitest";
import { DEFAULT_PACING_OPTIONS, resolvePacingOptions } from "../../../src/flow/pacingOptions.js";

describe("resolvePacingOptions", () => {
  it("false turns pacing off; undefined and {} give the defaults", () => {
    expect(resolvePacingOptions(false)).toBeUndefined();
    expect(resolvePacingOptions(undefined)).toEqual({ decreaseFactor: 0.7, minRatePerSecond: 1, forgetAfterInMs: 10_000 });
    expect(resolvePacingOptions({})).toEqual({ ...DEFAULT_PACING_OPTIONS });
  });

  it("keeps what is given, defaults the rest, and hands out a fresh object each time", () => {
    expect(resolvePacingOptions({ decreaseFactor: 0.5 })).toEqual({ decreaseFactor: 0.5, minRatePerSecond: 1, forgetAfterInMs: 10_000 });
    expect(resolvePacingOptions({ minRatePerSecond: 0.5, forgetAfterInMs: 60_000 })).toEqual({
      decreaseFactor: 0.7,
      minRatePerSecond: 0.5,
      forgetAfterInMs: 60_000,
    });
    const a = resolvePacingOptions(undefined);
    a!.decreaseFactor = 0.1;
    expect(resolvePacingOptions(undefined)?.decreaseFactor).toBe(0.7);
    expect(DEFAULT_PACING_OPTIONS.decreaseFactor).toBe(0.7);
  });

  it.each<[unknown, typeof TypeError | typeof RangeError, RegExp]>([
    [null, TypeError, /^pacing must be false or an options object; got null\.$/],
    [true, TypeError, /^pacing must be false or an options object; got true\.$/],
    [[], TypeError, /^pacing must be false or an options object; got an array\.$/],
    ["on", TypeError, /^pacing must be false or an options object; got "on"\.$/],
    [{ decreaseFactor: 1 }, RangeError, /^pacing\.decreaseFactor must be between 0\.01 and 0\.99; got 1\.$/],
    [{ decreaseFactor: 0 }, RangeError, /^pacing\.decreaseFactor must be between 0\.01 and 0\.99; got 0\.$/],
    [{ decreaseFactor: null }, TypeError, /^pacing\.decreaseFactor must be a number; got null\.$/],
    [{ decreaseFactor: "0.5" }, TypeError, /^pacing\.decreaseFactor must be a number; got "0\.5"\.$/],
    [{ minRatePerSecond: 0 }, RangeError, /^pacing\.minRatePerSecond must be between 0\.01 and 1000000; got 0\.$/],
    [{ minRatePerSecond: Number.NaN }, TypeError, /^pacing\.minRatePerSecond must be a number; got NaN\.$/],
    [{ forgetAfterInMs: 0 }, RangeError, /^pacing\.forgetAfterInMs must be between 1 and 86400000; got 0\.$/],
    [{ forgetAfterInMs: Infinity }, RangeError, /^pacing\.forgetAfterInMs must be a finite number; got Infinity\.$/],
    [{ decreasefactor: 0.5 }, TypeError, /^pacing\.decreasefactor is not a known option; did you mean decreaseFactor\? Known options are decreaseFactor, minRatePerSecond, forgetAfterInMs\.$/],
  ])("rejects %j, naming the option", (value, type, message) => {
    const resolve = () => resolvePacingOptions(value);
    expect(resolve).toThrow(type);
    expect(resolve).toThrow(message);
  });

  it("names the option by the path it was given under", () => {
    expect(() => resolvePacingOptions({ decreaseFactor: 2 }, "circuitBreaker.pacing")).toThrow(/^circuitBreaker\.pacing\.decreaseFactor must be between/);
    expect(() => resolvePacingOptions(null, "circuitBreaker.pacing")).toThrow(/^circuitBreaker\.pacing must be false or an options object; got null\.$/);
  });
});
