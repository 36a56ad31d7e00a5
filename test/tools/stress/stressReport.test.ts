import { describe, expect, it } from "vitest";
import { renderStressReport } from "../../../tools/stress/stressReport.js";
import { formatStressSummary } from "../../../tools/stress/formatStressSummary.js";
import type { StressResult } from "../../../tools/stress/stressResult.js";

const result: StressResult = {
  command: "stress",
  target: { kind: "embedded", account: "devstoreaccount1", endpointHost: "127.0.0.1:10002", simulatedThrottleAt: 150 },
  table: "stress1",
  partitionKey: "<pk & co>",
  loadedEntities: 50,
  targetPerSecond: 2000,
  stepDurationInSeconds: 2,
  steps: [
    { step: 1, requestedEntitiesPerSecond: 50, achievedEntitiesPerSecond: 48, percentOfTarget: 2, operations: 53, failures: 0, skipped: 0, throttles: 0, timeouts: 0, retries: 0, breakerOpens: 0, p50InMs: 3, p99InMs: 21 },
    { step: 2, requestedEntitiesPerSecond: 300, achievedEntitiesPerSecond: 150, percentOfTarget: 8, operations: 316, failures: 2, skipped: 0, throttles: 62, timeouts: 0, retries: 60, breakerOpens: 1, p50InMs: 2, p99InMs: null },
  ],
  timeline: [0, 1, 2, 3].map((second) => ({ second, requestedEntitiesPerSecond: second < 2 ? 50 : 300, achievedEntitiesPerSecond: 40 + second, throttles: second, timeouts: 0, retries: second, p50InMs: 3, p99InMs: second === 1 ? null : 20 })),
  throttlingStarted: { atInSeconds: 2.4, step: 2, requestedEntitiesPerSecond: 300 },
  verdict: "Peak 150 entities/s <b>",
  interrupted: false,
  tableDeleted: true,
  reportPath: "/tmp/r.html",
  startedAt: "2026-01-01T00:00:00.000Z",
};

describe("renderStressReport", () => {
  const html = renderStressReport(result);

  it("is one self-contained HTML document: no scripts, no external resources", () => {
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toMatch(/<script|<link|src=|href=|@import|url\(/i);
  });

  it("has the three charts over time, the target and the simulated threshold", () => {
    expect(html.match(/<svg /g)).toHaveLength(3);
    for (const title of ["Throughput", "Throttles, timeouts and retries", "Latency"]) expect(html).toContain(`aria-label="${title}`);
    expect(html).toContain("per-partition target 2000/s");
    expect(html).toContain("simulated throttling above 150/s");
  });

  it("has the per-step table and the verdict, escaped", () => {
    expect(html).toContain("<td>316</td><td>2</td><td>0</td><td>62</td>");
    expect(html).toContain("<td>-</td>");
    expect(html).toContain("Peak 150 entities/s &lt;b&gt;");
    expect(html).toContain("&lt;pk &amp; co&gt;");
    expect(html).not.toContain("<pk & co>");
  });
});

describe("formatStressSummary", () => {
  it("prints the target, the step table, the verdict, the table's fate and the report path", () => {
    const text = formatStressSummary(result);
    expect(text).toContain('Stress test of PartitionKey "<pk & co>" in table stress1, embedded Azurite (simulator throttles above 150 entities/s)');
    expect(text).toMatch(/2\s+300\s+150\s+8\s+316\s+2\s+0\s+62\s+0\s+60\s+1\s+2\s+-/);
    expect(text).toContain("Table stress1 deleted.");
    expect(text).toContain("Report: /tmp/r.html");
  });

  it("says what became of the table: kept only on an account, gone with the embedded Azurite", () => {
    const kept = formatStressSummary({ ...result, tableDeleted: false, target: { kind: "account", account: "acct", endpointHost: "acct.table.core.windows.net", simulatedThrottleAt: null } });
    expect(kept).toContain("Table stress1 kept (pass --cleanup to delete it).");
    const embedded = formatStressSummary({ ...result, tableDeleted: false });
    expect(embedded).toContain("Table stress1 went with the embedded Azurite (in memory).");
    expect(embedded).not.toContain("kept");
  });
});

describe("skipped operations", () => {
  // The run issue 37 quotes: the last step could not send 1,592 of its 6,579 operations.
  const limited: StressResult = {
    ...result,
    steps: [
      ...result.steps,
      { step: 3, requestedEntitiesPerSecond: 2500, achievedEntitiesPerSecond: 1760, percentOfTarget: 88, operations: 6579, failures: 0, skipped: 1592, throttles: 310, timeouts: 0, retries: 305, breakerOpens: 0, p50InMs: 412, p99InMs: 5210 },
    ],
  };
  const limit = "Step 3 skipped 1,592 of 6,579 operations (24 %): its 88 % of target measures this load generator, which had 256 operations in flight (operations took 412 ms at p50, retries included), not the account.";

  it("the terminal says what the column counts, and names the step whose rate it limits", () => {
    const text = formatStressSummary(limited);
    expect(text).toContain('"skipped" counts operations not sent: each fell due while the load generator already had its maximum of 256 operations in flight');
    expect(text).toContain(limit);
    expect(text).not.toContain("Step 2 skipped");
    expect(formatStressSummary(result)).not.toContain("measures this load generator");
  });

  it("so does the report", () => {
    const html = renderStressReport(limited);
    expect(html).toContain(`<p class="verdict">${limit}</p>`);
    expect(html).toContain("&quot;skipped&quot; counts operations not sent");
    expect(renderStressReport(result)).not.toContain("measures this load generator");
  });
});
