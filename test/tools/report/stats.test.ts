import { describe, expect, it } from "vitest";
import { percentile, summarizeLatencies } from "../../../tools/report/stats.js";

describe("percentile (nearest rank)", () => {
  it.each([
    [[15, 20, 35, 40, 50], 30, 20],
    [[15, 20, 35, 40, 50], 40, 20],
    [[15, 20, 35, 40, 50], 50, 35],
    [[15, 20, 35, 40, 50], 100, 50],
    [[3, 1, 2], 50, 2],
    [[7], 99, 7],
  ])("%j p%i = %i", (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });

  it("p99 of 1..100 is 99, p50 is 50; nothing for no values", () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile([], 50)).toBeUndefined();
  });

  it("does not reorder the caller's array, and refuses p outside (0, 100]", () => {
    const values = [3, 1, 2];
    percentile(values, 50);
    expect(values).toEqual([3, 1, 2]);
    expect(() => percentile(values, 0)).toThrow(RangeError);
    expect(() => percentile(values, 101)).toThrow(RangeError);
  });

  it("summarizeLatencies rounds to whole milliseconds", () => {
    expect(summarizeLatencies([1.4, 2.6, 10.5])).toEqual({ count: 3, p50InMs: 3, p99InMs: 11, maxInMs: 11 });
    expect(summarizeLatencies([])).toEqual({ count: 0, p50InMs: undefined, p99InMs: undefined, maxInMs: undefined });
  });
});
