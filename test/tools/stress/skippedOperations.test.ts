import { describe, expect, it } from "vitest";
import { generatorLimits, MATERIAL_SKIPPED_SHARE } from "../../../tools/stress/skippedOperations.js";
import type { StepStats } from "../../../tools/stress/stressStats.js";

const step = (n: number, operations: number, skipped: number, p50InMs: number | null = 40): StepStats => ({
  step: n, requestedEntitiesPerSecond: 500 * n, achievedEntitiesPerSecond: 400 * n, percentOfTarget: 20 * n, operations, failures: 0, skipped,
  throttles: 0, timeouts: 0, retries: 0, breakerOpens: 0, p50InMs, p99InMs: null,
});

describe("generatorLimits", () => {
  it("names each step that skipped a material share, and no other", () => {
    expect(MATERIAL_SKIPPED_SHARE).toBe(0.05);
    const limits = generatorLimits([step(1, 1000, 0), step(2, 1000, 49), step(3, 1000, 50), step(4, 2000, 1200, null), step(5, 0, 0)]);
    expect(limits).toEqual([
      "Step 3 skipped 50 of 1,000 operations (5 %): its 60 % of target measures this load generator, which had 256 operations in flight (operations took 40 ms at p50, retries included), not the account.",
      "Step 4 skipped 1,200 of 2,000 operations (60 %): its 80 % of target measures this load generator, which had 256 operations in flight, not the account.",
    ]);
  });
});
