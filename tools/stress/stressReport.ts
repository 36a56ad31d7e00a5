import type { StressResult } from "./stressResult.js";
import { escapeHtml } from "../report/escapeHtml.js";
import { lineChart } from "../report/svgChart.js";
import { generatorLimits, MATERIAL_SKIPPED_SHARE, SKIPPED_MEANING } from "./skippedOperations.js";

const COLORS = { achieved: "#1f77b4", asked: "#7f7f7f", target: "#d62728", throttles: "#d62728", timeouts: "#ff7f0e", retries: "#2ca02c", p50: "#1f77b4", p99: "#9467bd" };

/**
 * The stress test's report: one self-contained HTML file (inline CSS and SVG, no scripts,
 * nothing fetched) with the verdict, the per-step table and charts of throughput,
 * throttles and latency over time. Pure.
 */
export function renderStressReport(result: StressResult): string {
  const t = result.timeline;
  const at = (pick: (s: (typeof t)[number]) => number | null) => t.map((s) => [s.second, pick(s)] as const);
  const throughput = lineChart({
    title: "Throughput",
    xLabel: "seconds",
    yLabel: "entities/s",
    series: [
      { name: "achieved", color: COLORS.achieved, points: at((s) => s.achievedEntitiesPerSecond) },
      { name: "asked", color: COLORS.asked, points: at((s) => s.requestedEntitiesPerSecond), dashed: true },
    ],
    references: [
      { value: result.targetPerSecond, label: `per-partition target ${result.targetPerSecond}/s`, color: COLORS.target },
      ...(result.target.simulatedThrottleAt === null || result.target.simulatedThrottleAt === result.targetPerSecond
        ? []
        : [{ value: result.target.simulatedThrottleAt, label: `simulated throttling above ${result.target.simulatedThrottleAt}/s`, color: COLORS.timeouts }]),
    ],
  });
  const throttles = lineChart({
    title: "Throttles, timeouts and retries",
    xLabel: "seconds",
    yLabel: "per second",
    series: [
      // Retries first and dashed: every throttle is usually retried, and the lines would hide each other.
      { name: "retries", color: COLORS.retries, points: at((s) => s.retries), dashed: true },
      { name: "throttled (503/429)", color: COLORS.throttles, points: at((s) => s.throttles) },
      { name: "timeouts", color: COLORS.timeouts, points: at((s) => s.timeouts) },
    ],
  });
  const latency = lineChart({
    title: "Latency (operations ending each second, retries included)",
    xLabel: "seconds",
    yLabel: "ms",
    series: [
      { name: "p50", color: COLORS.p50, points: at((s) => s.p50InMs) },
      { name: "p99", color: COLORS.p99, points: at((s) => s.p99InMs) },
    ],
  });
  const target =
    result.target.kind === "embedded"
      ? `embedded Azurite${result.target.simulatedThrottleAt === null ? "" : `, the simulator throttling above ${result.target.simulatedThrottleAt} entities/s`} (Azurite itself never throttles)`
      : `account ${result.target.account} at ${result.target.endpointHost}`;
  const header = ["step", "asked entities/s", "achieved entities/s", "% of target", "operations", "failed", "skipped", "throttles", "timeouts", "retries", "breaker opens", "p50 ms", "p99 ms"];
  const rows = result.steps.map((s) =>
    [s.step, s.requestedEntitiesPerSecond, s.achievedEntitiesPerSecond, s.percentOfTarget, s.operations, s.failures, s.skipped, s.throttles, s.timeouts, s.retries, s.breakerOpens, s.p50InMs ?? "-", s.p99InMs ?? "-"]
      .map((v) => `<td>${escapeHtml(String(v))}</td>`)
      .join(""),
  );
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Partition stress test: ${escapeHtml(result.partitionKey)}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2rem; color: #222; max-width: 60rem; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; }
th { background: #f4f4f4; }
.verdict { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.75rem 1rem; }
figure { margin: 1.5rem 0; }
</style>
</head>
<body>
<h1>Partition stress test</h1>
<p>PartitionKey <code>${escapeHtml(result.partitionKey)}</code> in table <code>${escapeHtml(result.table)}</code>, ${escapeHtml(target)}.
${result.loadedEntities} entities (about 1 KiB each) loaded first; ${result.steps.length} steps of ${result.stepDurationInSeconds} s;
a mix of upserts, point reads, queries and <code>$batch</code> writes through azure-storage-resilience's retry policy. Started ${escapeHtml(result.startedAt)}${result.interrupted ? "; <strong>interrupted</strong>" : ""}.</p>
<p class="verdict">${escapeHtml(result.verdict)}</p>
${generatorLimits(result.steps).map((limit) => `<p class="verdict">${escapeHtml(limit)}</p>`).join("\n")}
<table>
<thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead>
<tbody>
${rows.map((r) => `<tr>${r}</tr>`).join("\n")}
</tbody>
</table>
<figure>${throughput}</figure>
<figure>${throttles}</figure>
<figure>${latency}</figure>
<p>Achieved throughput counts the entities of operations that succeeded in each interval (a <code>$batch</code> counts its entities, a query counts as one).
${escapeHtml(SKIPPED_MEANING)} A step that skipped ${MATERIAL_SKIPPED_SHARE * 100} % of its operations or more is named above the table: its rate measures the load generator, not the account.
The guide's reading: sustained throughput near or above the ${result.targetPerSecond.toLocaleString("en-US")} entities/s per-partition target means the PartitionKey is too coarse.</p>
</body>
</html>
`;
}
