import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../../src/testing/simulator/mulberry32.js";

describe("mulberry32", () => {
  it("repeats its sequence for a seed and differs across seeds", () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const c = mulberry32(43);
    const first = Array.from({ length: 5 }, () => a());
    expect(Array.from({ length: 5 }, () => b())).toEqual(first);
    expect(Array.from({ length: 5 }, () => c())).not.toEqual(first);
  });

  it("matches the reference implementation's first outputs", () => {
    // Reference: the original JavaScript mulberry32 by Tommy Ettinger, seed 1.
    const random = mulberry32(1);
    expect([random(), random(), random()].map((x) => x.toFixed(10))).toEqual(["0.6270739406", "0.0027357212", "0.5274470400"]);
  });

  it("stays in [0, 1) and spreads evenly", () => {
    const random = mulberry32(7);
    const buckets = new Array<number>(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const x = random();
      expect(x >= 0 && x < 1).toBe(true);
      buckets[Math.floor(x * 10)]!++;
    }
    for (const bucket of buckets) expect(Math.abs(bucket - 10_000)).toBeLessThan(500);
  });
});
