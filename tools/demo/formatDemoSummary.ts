import { cell, textTable } from "../report/textTable.js";
import type { DemoSummary, RunSummary } from "./demoSummary.js";
import type { PartitionRow } from "./runStats.js";
import type { Verification } from "./verifyWrites.js";

const ROW_HEADER = ["partition", "ops", "ok", "failed", "requests", "retries", "read-backs", "throttles", "timeouts", "resets", "breaker opens", "p50 ms", "p99 ms"];
/** Under the first run's table: how a request count adds up. */
const REQUESTS_NOTE =
  "requests = first attempts (one per operation that reached the service) + retries + read-backs (reads settling a write whose answer was lost)";

/** The demo's summary as the terminal shows it. Pure. */
export function formatDemoSummary(summary: DemoSummary): string {
  const { options } = summary;
  const lines: string[] = [];
  const how = summary.interrupted ? `Interrupted after ${seconds(summary.ranForSeconds)}` : `Ran ${seconds(summary.ranForSeconds)}`;
  lines.push(
    `${how} at ${options.ratePerSecond} ops/s over ${options.partitions} partition${options.partitions === 1 ? "" : "s"}, seed ${options.seed}` +
      ` (${summary.resilient.fired} of ${summary.resilient.planned} planned operations fired).`,
  );
  const target = summary.throttleTarget;
  lines.push(
    `Per-partition target: ${target.entitiesPerSecondPerPartition} entities/s (Azure's ${target.azureEntitiesPerSecondPerPartition.toLocaleString("en-US")}/s scaled down ${target.scaledDownBy}x for one machine).`,
  );
  lines.push(`Faults: ${describeFaults(summary)}`);
  lines.push(`Metrics: ${describeMetrics(summary)}`);
  lines.push("");
  lines.push(...runSection(summary.resilient, summary.hotPartition));
  lines.push(`  ${REQUESTS_NOTE}`);
  if (summary.baseline !== null) {
    lines.push("");
    lines.push(...runSection(summary.baseline, summary.hotPartition));
    lines.push("");
    lines.push(...sideBySide(summary.resilient, summary.baseline));
  }
  lines.push("");
  // Entities, unlike the operations above: a $batch writes several, a read none.
  lines.push("Verification, reading the store directly (in entities, not operations: a $batch writes several):");
  const label = summary.baseline === null ? "" : "resilient:   ";
  lines.push(`  ${label}${describeVerification(summary.resilient.verification)}`);
  if (summary.baseline !== null) lines.push(`  SDK default: ${describeVerification(summary.baseline.verification)}`);
  const failedButStored = summary.resilient.verification.failedButStored + (summary.baseline?.verification.failedButStored ?? 0);
  if (summary.resilient.failureCauses.some((f) => f.cause.includes("budget-exhausted"))) {
    lines.push("  (budget-exhausted: the client's retry budget refused more retries so as not to multiply the load on the service; docs/data-safety.md.)");
  }
  if (failedButStored > 0) {
    lines.push("  (Reported failed but stored: the connection reset after storage applied an insert or a $batch, and the retry met 409 EntityAlreadyExists.)");
  }
  return lines.join("\n");
}

function runSection(run: RunSummary, hotPartition: string): string[] {
  const rows = [...run.table.partitions, run.table.total].map((row) => partitionCells(row, hotPartition));
  const lines = [`${run.label}`, ...textTable(ROW_HEADER, rows).map((line) => `  ${line}`)];
  if (run.failureCauses.length > 0) lines.push(`  failures: ${run.failureCauses.map((f) => `${f.count} x ${f.cause}`).join(", ")}`);
  return lines;
}

function partitionCells(row: PartitionRow, hotPartition: string): string[] {
  const name = row.partition === hotPartition ? `${row.partition} (hot)` : row.partition;
  const failed = row.aborted > 0 ? `${row.failures}+${row.aborted} cut` : String(row.failures);
  return [
    name,
    cell(row.operations),
    cell(row.successes),
    failed,
    cell(row.requests),
    cell(row.retries),
    cell(row.readBacks),
    cell(row.throttles),
    cell(row.timeouts),
    cell(row.resets),
    cell(row.breakerOpens),
    cell(row.p50InMs),
    cell(row.p99InMs),
  ];
}

function sideBySide(resilient: RunSummary, baseline: RunSummary): string[] {
  const a = resilient.table.total;
  const b = baseline.table.total;
  const rows = [
    ["operations that succeeded", cell(a.successes), cell(b.successes)],
    ["operations reported failed", cell(a.failures), cell(b.failures)],
    ["requests sent to the service", cell(a.requests), cell(b.requests)],
    ["  of which retries", cell(a.retries), cell(b.retries)],
    ["  of which read-backs", cell(a.readBacks), cell(b.readBacks)],
    ["p50 latency ms", cell(a.p50InMs), cell(b.p50InMs)],
    ["p99 latency ms", cell(a.p99InMs), cell(b.p99InMs)],
    ["acknowledged entities lost", cell(resilient.verification.lost), cell(baseline.verification.lost)],
  ];
  return ["Side by side", ...textTable(["", "resilient", "SDK default"], rows).map((line) => `  ${line}`)];
}

function describeVerification(v: Verification): string {
  return `${v.acknowledged} entities acknowledged, ${v.found} found, ${v.lost} lost; ${v.failedButStored} entities reported failed but actually stored (${v.failedButStored - v.failedButStoredUnmarked} of them marked possibly applied)`;
}

function describeFaults(summary: DemoSummary): string {
  const parts = [`${summary.hotPartition} surges x${summary.surge.multiplier} ${span(summary.surge.startInSeconds, summary.surge.endInSeconds)}`];
  for (const fault of summary.faults) {
    if (fault.name === "offline") parts.push(`${fault.partition} offline (503 ServerBusy) ${span(fault.startInSeconds, fault.endInSeconds)}`);
    if (fault.name === "timeouts") parts.push(`${fault.partition} times out (500 OperationTimedOut) ${span(fault.startInSeconds, fault.endInSeconds)}`);
  }
  const resets = summary.faults.filter((f) => f.name.startsWith("reset"));
  if (resets.length > 0) parts.push(`${(resets[0]?.probability ?? 0) * 100} % of requests reset before, ${(resets[1]?.probability ?? 0) * 100} % after reaching storage`);
  parts.push("503 above the target");
  return parts.join("; ");
}

function describeMetrics(summary: DemoSummary): string {
  const scrape = summary.metrics.scrape;
  if (scrape === null) return `${summary.metrics.url} (not scraped: the run stopped first)`;
  if (scrape.status === null) return `${summary.metrics.url} (scrape at ${seconds(scrape.atInSeconds)} failed: ${scrape.error ?? "no answer"})`;
  return `${summary.metrics.url} answered ${scrape.status} with ${scrape.azureStorageSeries} azure_storage_ series at ${seconds(scrape.atInSeconds)}`;
}

function span(start: number, end: number | null): string {
  return end === null ? `from ${seconds(start)}` : `${start.toFixed(1)}-${seconds(end)}`;
}

function seconds(value: number): string {
  return `${value.toFixed(1)} s`;
}
