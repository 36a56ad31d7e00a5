import { textTable } from "../report/textTable.js";

/** Counters of one partition during the run (cumulative). */
export interface PartitionProgress {
  partition: string;
  /** Operations finished. */
  done: number;
  /** Operations fired and not finished. */
  inFlight: number;
  failed: number;
  /** Retries that reached the service so far; never decreases. */
  retries: number;
  /** 503 answers so far. */
  throttles: number;
  /** Whether the partition's circuit is open now. */
  circuitOpen: boolean;
}

/** What the live display shows at one moment. */
export interface ProgressSnapshot {
  elapsedInMs: number;
  durationInMs: number;
  hotPartition: string;
  resilient: PartitionProgress[];
  /** Baseline totals; undefined with `--no-baseline`. */
  baseline?: { done: number; failed: number; retries: number; throttles: number };
}

/** Operations per second per partition between two snapshots. Pure. */
export function ratesBetween(previous: ProgressSnapshot | undefined, current: ProgressSnapshot): Map<string, number> {
  const rates = new Map<string, number>();
  const seconds = previous === undefined ? current.elapsedInMs / 1000 : (current.elapsedInMs - previous.elapsedInMs) / 1000;
  for (const row of current.resilient) {
    const before = previous?.resilient.find((r) => r.partition === row.partition)?.done ?? 0;
    rates.set(row.partition, seconds > 0 ? (row.done - before) / seconds : 0);
  }
  return rates;
}

/** The compact live table shown on a terminal. Pure. */
export function formatProgressTable(snapshot: ProgressSnapshot, rates: Map<string, number>): string[] {
  const rows = snapshot.resilient.map((row) => [
    row.partition === snapshot.hotPartition ? `${row.partition} (hot)` : row.partition,
    (rates.get(row.partition) ?? 0).toFixed(1),
    String(row.done),
    String(row.inFlight),
    String(row.failed),
    String(row.retries),
    String(row.throttles),
    row.circuitOpen ? "OPEN" : "closed",
  ]);
  const header = ["partition", "ops/s", "done", "in flight", "failed", "retries", "throttles", "circuit"];
  const lines = [`${clock(snapshot)}  resilient client`, ...textTable(header, rows).map((line) => `  ${line}`)];
  if (snapshot.baseline !== undefined) lines.push(`  SDK default retry: ${describeBaseline(snapshot.baseline)}`);
  return lines;
}

/** One plain line for logs and pipes. Pure. */
export function formatProgressLine(snapshot: ProgressSnapshot): string {
  const total = snapshot.resilient.reduce(
    (sum, row) => ({
      done: sum.done + row.done,
      failed: sum.failed + row.failed,
      retries: sum.retries + row.retries,
      throttles: sum.throttles + row.throttles,
    }),
    { done: 0, failed: 0, retries: 0, throttles: 0 },
  );
  const open = snapshot.resilient.filter((row) => row.circuitOpen).map((row) => row.partition);
  let line = `${clock(snapshot)} resilient: ${total.done} done, ${total.failed} failed, ${total.retries} retries, ${total.throttles} throttles, open circuits: ${open.length === 0 ? "none" : open.join(",")}`;
  if (snapshot.baseline !== undefined) line += ` | SDK default: ${describeBaseline(snapshot.baseline)}`;
  return line;
}

function describeBaseline(b: NonNullable<ProgressSnapshot["baseline"]>): string {
  return `${b.done} done, ${b.failed} failed, ${b.retries} retries, ${b.throttles} throttles`;
}

function clock(snapshot: ProgressSnapshot): string {
  const elapsed = Math.min(snapshot.elapsedInMs, Number.MAX_SAFE_INTEGER) / 1000;
  const phase = snapshot.elapsedInMs > snapshot.durationInMs ? " draining" : "";
  return `[${elapsed.toFixed(1)}/${(snapshot.durationInMs / 1000).toFixed(0)} s${phase}]`;
}
