import { summarizeLatencies } from "../report/stats.js";
import type { OperationResult } from "./operationResult.js";
import { emptyWireCounts, type WireCounts } from "./wireTally.js";

/** One row of the summary table: a partition, or the total. */
export interface PartitionRow {
  partition: string;
  /** Operations fired. */
  operations: number;
  successes: number;
  /** Reported failed to the application. */
  failures: number;
  /** Cut off by Ctrl-C or the drain timeout. */
  aborted: number;
  /** Requests that reached the service: first attempts, retries and read-backs. */
  requests: number;
  /** Retries that reached the service (requests repeating an operation's client request id). */
  retries: number;
  /** Read-backs that reached the service (GETs settling a write whose outcome was lost). */
  readBacks: number;
  /** 503 ServerBusy answers (offline or over target). */
  throttles: number;
  /** 500 OperationTimedOut answers. */
  timeouts: number;
  /** Connection resets. */
  resets: number;
  /** Times the partition's circuit opened; null when the run had no breaker. */
  breakerOpens: number | null;
  /** Median operation latency, retries included; null with no operations. */
  p50InMs: number | null;
  /** 99th percentile operation latency; null with no operations. */
  p99InMs: number | null;
}

/** Per-partition rows and their total. */
export interface RunTable {
  partitions: PartitionRow[];
  total: PartitionRow;
}

/**
 * Builds the summary table from the operations' results (what the application saw), the
 * simulator's counts (what the service saw) and the breaker's opens. Pure.
 */
export function tabulateRun(
  partitions: readonly string[],
  results: readonly OperationResult[],
  wire: (partition: string) => WireCounts,
  breakerOpens: ((partition: string) => number) | undefined,
): RunTable {
  const rows = partitions.map((partition) =>
    row(
      partition,
      results.filter((r) => r.partition === partition),
      wire(partition),
      breakerOpens === undefined ? null : breakerOpens(partition),
    ),
  );
  const wireTotal = rows.reduce(
    (sum, r) => ({
      requests: sum.requests + r.requests,
      retries: sum.retries + r.retries,
      readBacks: sum.readBacks + r.readBacks,
      throttles: sum.throttles + r.throttles,
      timeouts: sum.timeouts + r.timeouts,
      resets: sum.resets + r.resets,
    }),
    emptyWireCounts(),
  );
  const opens = breakerOpens === undefined ? null : rows.reduce((sum, r) => sum + (r.breakerOpens ?? 0), 0);
  return { partitions: rows, total: row("total", results, wireTotal, opens) };
}

function row(partition: string, results: readonly OperationResult[], wire: WireCounts, breakerOpens: number | null): PartitionRow {
  const latency = summarizeLatencies(results.filter((r) => r.outcome !== "aborted").map((r) => r.latencyInMs));
  return {
    partition,
    operations: results.length,
    successes: results.filter((r) => r.outcome === "success").length,
    failures: results.filter((r) => r.outcome === "failed").length,
    aborted: results.filter((r) => r.outcome === "aborted").length,
    requests: wire.requests,
    retries: wire.retries,
    readBacks: wire.readBacks,
    throttles: wire.throttles,
    timeouts: wire.timeouts,
    resets: wire.resets,
    breakerOpens,
    p50InMs: latency.p50InMs ?? null,
    p99InMs: latency.p99InMs ?? null,
  };
}

/** Failures grouped by what the application saw, most frequent first. Pure. */
export function failureCauses(results: readonly OperationResult[]): Array<{ cause: string; count: number }> {
  const counts = new Map<string, number>();
  for (const result of results) {
    if (result.outcome !== "failed") continue;
    const what = [result.status === undefined ? undefined : String(result.status), result.errorCode].filter((p) => p !== undefined).join(" ") || "error";
    const cause = result.stopReason === undefined ? what : `${what} (${result.stopReason})`;
    counts.set(cause, (counts.get(cause) ?? 0) + 1);
  }
  return [...counts].map(([cause, count]) => ({ cause, count })).sort((a, b) => b.count - a.count || a.cause.localeCompare(b.cause));
}
