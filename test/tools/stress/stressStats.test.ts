import { describe, expect, it } from "vitest";
import type { RampStep } from "../../../tools/stress/rampPlan.js";
import { stepStats, throttlingStart, timeline, verdict, type StressEvent, type StressOperationResult } from "../../../tools/stress/stressStats.js";

const steps: RampStep[] = [
  { index: 0, entitiesPerSecond: 100, startInMs: 0, endInMs: 2000 },
  { index: 1, entitiesPerSecond: 300, startInMs: 2000, endInMs: 4000 },
];

function op(step: number, endedAtInMs: number, overrides: Partial<StressOperationResult> = {}): StressOperationResult {
  return { step, startedAtInMs: endedAtInMs - 10, endedAtInMs, latencyInMs: 10, outcome: "success", entities: 1, ...overrides };
}

const results = [
  op(0, 100),
  op(0, 1500, { entities: 10 }),
  op(0, 2100, { latencyInMs: 700 }), // fired in step 1, ended in step 2
  op(1, 2500, { outcome: "failed", entities: 0, latencyInMs: 3000 }),
  op(1, 3900, { entities: 10 }),
  op(1, 3900, { outcome: "skipped", entities: 0, latencyInMs: 0 }),
  op(1, 4500, { latencyInMs: 2600 }), // drained after the last step
];
const events: StressEvent[] = [
  { atInMs: 2600, type: "throttle" },
  { atInMs: 2600, type: "retry" },
  { atInMs: 3000, type: "timeout" },
  { atInMs: 3100, type: "breakerOpen" },
];

describe("stepStats", () => {
  it("achieved counts successful entities ending in the step; latency and failures belong to the step that fired them", () => {
    const [first, second] = stepStats(steps, results, events, 2000);
    expect(first).toEqual({
      step: 1, requestedEntitiesPerSecond: 100, achievedEntitiesPerSecond: 6, percentOfTarget: 0, operations: 3, failures: 0, skipped: 0,
      throttles: 0, timeouts: 0, retries: 0, breakerOpens: 0, p50InMs: 10, p99InMs: 700,
    });
    expect(second).toEqual({
      step: 2, requestedEntitiesPerSecond: 300, achievedEntitiesPerSecond: 6, percentOfTarget: 0, operations: 4, failures: 1, skipped: 1,
      throttles: 1, timeouts: 1, retries: 1, breakerOpens: 1, p50InMs: 2600, p99InMs: 3000,
    });
  });

  it("percent of target", () => {
    const [first] = stepStats([steps[0]!], [op(0, 500, { entities: 3000 })], [], 2000);
    expect(first).toMatchObject({ achievedEntitiesPerSecond: 1500, percentOfTarget: 75 });
  });
});

describe("timeline", () => {
  it("one row per second through the drain, the asked rate of the step in force", () => {
    const rows = timeline(steps, results, events);
    expect(rows.map((r) => r.second)).toEqual([0, 1, 2, 3, 4]);
    expect(rows.map((r) => r.requestedEntitiesPerSecond)).toEqual([100, 100, 300, 300, 0]);
    expect(rows.map((r) => r.achievedEntitiesPerSecond)).toEqual([1, 10, 1, 10, 1]);
    expect(rows.map((r) => [r.throttles, r.timeouts, r.retries])).toEqual([[0, 0, 0], [0, 0, 0], [1, 0, 1], [0, 1, 0], [0, 0, 0]]);
    expect(rows[4]).toMatchObject({ p50InMs: 2600, p99InMs: 2600 });
  });
});

describe("throttlingStart and verdict", () => {
  it("the first throttle or timeout, and its step", () => {
    expect(throttlingStart(steps, events)).toEqual({ atInSeconds: 2.6, step: 2, requestedEntitiesPerSecond: 300 });
    expect(throttlingStart(steps, [{ atInMs: 100, type: "retry" }])).toBeNull();
  });

  const stats = stepStats(steps, results, events, 2000);

  it("names the simulated threshold when embedded", () => {
    expect(verdict(stats, throttlingStart(steps, events), 2000, 250)).toMatch(/Throttling started at 2\.6 s \(step 2, 300 entities\/s asked\), where the simulator throttles \(above 250/);
  });

  it("below the target on a real account: points at the account-wide load", () => {
    expect(verdict(stats, throttlingStart(steps, events), 2000)).toMatch(/below the per-partition target/);
  });

  it("near the target: the key is too coarse", () => {
    const busy = stepStats([steps[0]!], [op(0, 500, { entities: 3400 })], [], 2000);
    expect(verdict(busy, null, 2000)).toMatch(/85 % of the 2,000 entities\/s per-partition target\. No throttling seen, but .* too coarse/);
    expect(verdict(busy, { atInSeconds: 1, step: 1, requestedEntitiesPerSecond: 1700 }, 2000)).toMatch(/too coarse/);
  });

  it("far below and never throttled: not pushed to its limit", () => {
    expect(verdict(stats, null, 2000)).toMatch(/not pushed to its limit/);
  });
});
