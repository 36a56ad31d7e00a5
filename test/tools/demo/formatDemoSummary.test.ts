import { describe, expect, it } from "vitest";
import type { DemoSummary, RunSummary } from "../../../tools/demo/demoSummary.js";
import { formatDemoSummary } from "../../../tools/demo/formatDemoSummary.js";
import type { PartitionRow } from "../../../tools/demo/runStats.js";

function row(partition: string, overrides: Partial<PartitionRow> = {}): PartitionRow {
  return {
    partition, operations: 100, successes: 100, failures: 0, aborted: 0, requests: 105, retries: 5, readBacks: 0, throttles: 4, timeouts: 1, resets: 1,
    breakerOpens: 1, p50InMs: 4, p99InMs: 900, ...overrides,
  };
}

function run(label: string, overrides: Partial<RunSummary> = {}): RunSummary {
  return {
    label,
    planned: 200,
    fired: 200,
    table: { partitions: [row("p0"), row("p1")], total: row("total", { operations: 200, successes: 200, requests: 230, retries: 10, readBacks: 20 }) },
    failureCauses: [],
    verification: { acknowledged: 150, found: 150, lost: 0, failedButStored: 0, failedButStoredUnmarked: 0, failedNotStored: 0, lostExamples: [] },
    ...overrides,
  };
}

function summary(overrides: Partial<DemoSummary> = {}): DemoSummary {
  return {
    command: "demo",
    options: { durationInSeconds: 20, ratePerSecond: 40, partitions: 2, seed: 1, baseline: true },
    interrupted: false,
    ranForSeconds: 20,
    throttleTarget: { entitiesPerSecondPerPartition: 32, azureEntitiesPerSecondPerPartition: 2000, scaledDownBy: 63 },
    hotPartition: "p0",
    surge: { startInSeconds: 2, endInSeconds: 7, multiplier: 2 },
    faults: [
      { name: "offline", description: "", partition: "p0", startInSeconds: 8, endInSeconds: 15 },
      { name: "timeouts", description: "", partition: "p1", startInSeconds: 11, endInSeconds: 15 },
      { name: "reset-before", description: "", partition: null, startInSeconds: 0, endInSeconds: null, probability: 0.01 },
      { name: "reset-after", description: "", partition: null, startInSeconds: 0, endInSeconds: null, probability: 0.01 },
    ],
    metrics: { url: "http://127.0.0.1:9999/metrics", scrape: { atInSeconds: 10, status: 200, azureStorageSeries: 57 } },
    resilient: run("With azure-storage-resilience"),
    baseline: run("With the SDK's default retry", {
      table: { partitions: [row("p0", { failures: 9, breakerOpens: null }), row("p1", { breakerOpens: null })], total: row("total", { successes: 191, failures: 9, requests: 262, retries: 62, breakerOpens: null }) },
      failureCauses: [{ cause: "503 ServerBusy", count: 9 }],
      verification: { acknowledged: 140, found: 140, lost: 0, failedButStored: 2, failedButStoredUnmarked: 0, failedNotStored: 7, lostExamples: [] },
    }),
    ...overrides,
  };
}

describe("formatDemoSummary", () => {
  const text = formatDemoSummary(summary());

  it("states the run, the scaled-down target, the faults and the metrics scrape", () => {
    expect(text).toContain("Ran 20.0 s at 40 ops/s over 2 partitions, seed 1 (200 of 200 planned operations fired).");
    expect(text).toContain("Per-partition target: 32 entities/s (Azure's 2,000/s scaled down 63x");
    expect(text).toContain("p0 offline (503 ServerBusy) 8.0-15.0 s");
    expect(text).toContain("p1 times out (500 OperationTimedOut) 11.0-15.0 s");
    expect(text).toContain("1 % of requests reset before, 1 % after reaching storage");
    expect(text).toContain("http://127.0.0.1:9999/metrics answered 200 with 57 azure_storage_ series at 10.0 s");
  });

  it("tables both runs, marks the hot partition, a dash where the baseline has no breaker, and the failure causes", () => {
    expect(text).toMatch(/partition\s+ops\s+ok\s+failed\s+requests\s+retries\s+read-backs\s+throttles\s+timeouts\s+resets\s+breaker opens\s+p50 ms\s+p99 ms/);
    expect(text).toMatch(/p0 \(hot\)\s+100\s+100\s+0\s+105\s+5\s+0\s+4\s+1\s+1\s+1\s+4\s+900/);
    expect(text).toMatch(/p0 \(hot\)\s+100\s+100\s+9\s+105\s+5\s+0\s+4\s+1\s+1\s+-\s+4\s+900/);
    expect(text).toMatch(/total\s+200\s+200\s+0\s+230\s+10\s+20\s/);
    expect(text).toContain("failures: 9 x 503 ServerBusy");
    expect(text).toMatch(/operations that succeeded\s+200\s+191/);
    expect(text).toMatch(/acknowledged entities lost\s+0\s+0/);
    // Requests as the service counted them (an operation refused by an open circuit sent none).
    expect(text).toMatch(/requests sent to the service\s+230\s+262/);
    // ... and how they add up: 200 operations + 10 retries + 20 read-backs = 230.
    expect(text).toMatch(/of which retries\s+10\s+62/);
    expect(text).toMatch(/of which read-backs\s+20\s+0/);
    expect(text).toContain("requests = first attempts (one per operation that reached the service) + retries + read-backs");
  });

  it("ends with the verification of both runs, saying that it counts entities where the table above counts operations", () => {
    expect(text).toContain("Verification, reading the store directly (in entities, not operations: a $batch writes several):");
    expect(text).toContain("resilient:   150 entities acknowledged, 150 found, 0 lost; 0 entities reported failed but actually stored");
    expect(text).toContain("SDK default: 140 entities acknowledged, 140 found, 0 lost; 2 entities reported failed but actually stored");
    expect(text).toContain("Reported failed but stored");
  });

  it("without a baseline, with an interruption and a failed scrape", () => {
    const short = formatDemoSummary(
      summary({ baseline: null, interrupted: true, ranForSeconds: 3.2, metrics: { url: "http://127.0.0.1:1/metrics", scrape: null } }),
    );
    expect(short).toContain("Interrupted after 3.2 s");
    expect(short).not.toContain("SDK default");
    expect(short).not.toContain("Side by side");
    expect(short).toContain("(not scraped: the run stopped first)");
    expect(short).toContain("  150 entities acknowledged");
  });
});
