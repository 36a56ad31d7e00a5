import { cell, textTable } from "../report/textTable.js";
import { generatorLimits, SKIPPED_MEANING } from "./skippedOperations.js";
import type { StressResult } from "./stressResult.js";

/** The stress result as the terminal shows it. Pure. */
export function formatStressSummary(result: StressResult): string {
  const target =
    result.target.kind === "embedded"
      ? `embedded Azurite (${result.target.simulatedThrottleAt === null ? "no simulated throttling" : `simulator throttles above ${result.target.simulatedThrottleAt} entities/s`})`
      : `account ${result.target.account} at ${result.target.endpointHost}`;
  const header = ["step", "asked/s", "achieved/s", "% target", "ops", "failed", "skipped", "throttles", "timeouts", "retries", "breaker opens", "p50 ms", "p99 ms"];
  const rows = result.steps.map((s) => [
    String(s.step),
    cell(s.requestedEntitiesPerSecond),
    cell(s.achievedEntitiesPerSecond),
    cell(s.percentOfTarget),
    cell(s.operations),
    cell(s.failures),
    cell(s.skipped),
    cell(s.throttles),
    cell(s.timeouts),
    cell(s.retries),
    cell(s.breakerOpens),
    cell(s.p50InMs),
    cell(s.p99InMs),
  ]);
  const lines = [
    `${result.interrupted ? "Interrupted stress test" : "Stress test"} of PartitionKey "${result.partitionKey}" in table ${result.table}, ${target}; ${result.loadedEntities} entities loaded, ${result.stepDurationInSeconds} s per step.`,
    ...textTable(header, rows).map((line) => `  ${line}`),
    `  ${SKIPPED_MEANING}`,
    result.verdict,
    ...generatorLimits(result.steps),
    tableFate(result),
    `Report: ${result.reportPath}`,
  ];
  return lines.join("\n");
}

/** What became of the test table: embedded Azurite kept it in memory, gone with it by the time this is printed. */
function tableFate(result: StressResult): string {
  if (result.tableDeleted) return `Table ${result.table} deleted.`;
  if (result.target.kind === "embedded") return `Table ${result.table} went with the embedded Azurite (in memory).`;
  return `Table ${result.table} kept (pass --cleanup to delete it).`;
}
