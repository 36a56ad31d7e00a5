import { describe, expect, it } from "vitest";
import { formatProgressLine, formatProgressTable, ratesBetween, type ProgressSnapshot } from "../../../tools/demo/progress.js";

function snapshot(elapsedInMs: number, done: number, open = false): ProgressSnapshot {
  return {
    elapsedInMs,
    durationInMs: 20_000,
    hotPartition: "p0",
    resilient: [
      { partition: "p0", done, inFlight: 3, failed: 1, retries: 7, throttles: 5, circuitOpen: open },
      { partition: "p1", done: 10, inFlight: 0, failed: 0, retries: 0, throttles: 0, circuitOpen: false },
    ],
    baseline: { done: 30, failed: 2, retries: 9, throttles: 6 },
  };
}

describe("progress", () => {
  it("rates are operations finished per second since the last snapshot", () => {
    const rates = ratesBetween(snapshot(1000, 10), snapshot(1500, 20));
    expect(rates.get("p0")).toBe(20);
    expect(rates.get("p1")).toBe(0);
    expect(ratesBetween(undefined, snapshot(2000, 10)).get("p0")).toBe(5);
  });

  it("the live table has a row per partition, the circuit state and the baseline", () => {
    const lines = formatProgressTable(snapshot(8000, 40, true), new Map([["p0", 12.34]]));
    expect(lines[0]).toBe("[8.0/20 s]  resilient client");
    expect(lines[1]).toMatch(/partition\s+ops\/s\s+done\s+in flight\s+failed\s+retries\s+throttles\s+circuit/);
    expect(lines[2]).toMatch(/p0 \(hot\)\s+12\.3\s+40\s+3\s+1\s+7\s+5\s+OPEN/);
    expect(lines[3]).toMatch(/p1\s+0\.0\s+10\s+0\s+0\s+0\s+0\s+closed/);
    expect(lines[4]).toBe("  SDK default retry: 30 done, 2 failed, 9 retries, 6 throttles");
  });

  it("the plain line sums the partitions and names open circuits; draining after the duration", () => {
    expect(formatProgressLine(snapshot(21_000, 40, true))).toBe(
      "[21.0/20 s draining] resilient: 50 done, 1 failed, 7 retries, 5 throttles, open circuits: p0 | SDK default: 30 done, 2 failed, 9 retries, 6 throttles",
    );
    expect(formatProgressLine({ ...snapshot(1000, 1), baseline: undefined })).toContain("open circuits: none");
  });
});
