import { summarizeLatencies } from "../report/stats.js";
import type { RampStep } from "./rampPlan.js";

/** How one stress operation ended. */
export interface StressOperationResult {
  step: number;
  startedAtInMs: number;
  endedAtInMs: number;
  latencyInMs: number;
  /** `skipped`: not sent because the client already had its maximum of operations in flight. */
  outcome: "success" | "failed" | "aborted" | "skipped";
  /** Entities the operation touched when it succeeded (a query: the rows returned). */
  entities: number;
}

/** Something the retry policy or the breaker reported, timed from the start of the ramp. */
export interface StressEvent {
  atInMs: number;
  type: "throttle" | "timeout" | "retry" | "breakerOpen";
}

/** One step of the report. */
export interface StepStats {
  step: number;
  requestedEntitiesPerSecond: number;
  /** Entities of operations that succeeded during the step, per second. */
  achievedEntitiesPerSecond: number;
  /** Achieved as a percentage of the per-partition target. */
  percentOfTarget: number;
  operations: number;
  failures: number;
  skipped: number;
  /** Throttled attempts (503 ServerBusy, 429) during the step. */
  throttles: number;
  /** Timed-out attempts (500 OperationTimedOut, 504, client timeouts) during the step. */
  timeouts: number;
  retries: number;
  breakerOpens: number;
  p50InMs: number | null;
  p99InMs: number | null;
}

/** One second of the timeline (for the charts). */
export interface SecondStats {
  second: number;
  requestedEntitiesPerSecond: number;
  achievedEntitiesPerSecond: number;
  throttles: number;
  timeouts: number;
  retries: number;
  p50InMs: number | null;
  p99InMs: number | null;
}

/** When the service first pushed back. */
export interface ThrottlingStart {
  atInSeconds: number;
  step: number;
  requestedEntitiesPerSecond: number;
}

/** Per-step statistics. Pure. */
export function stepStats(steps: readonly RampStep[], results: readonly StressOperationResult[], events: readonly StressEvent[], targetPerSecond: number): StepStats[] {
  return steps.map((step) => {
    const seconds = (step.endInMs - step.startInMs) / 1000;
    const fired = results.filter((r) => r.step === step.index);
    const completed = results.filter((r) => r.outcome === "success" && r.endedAtInMs >= step.startInMs && r.endedAtInMs < step.endInMs);
    const during = events.filter((e) => e.atInMs >= step.startInMs && e.atInMs < step.endInMs);
    const achieved = completed.reduce((sum, r) => sum + r.entities, 0) / seconds;
    const latency = summarizeLatencies(fired.filter((r) => r.outcome === "success" || r.outcome === "failed").map((r) => r.latencyInMs));
    return {
      step: step.index + 1,
      requestedEntitiesPerSecond: step.entitiesPerSecond,
      achievedEntitiesPerSecond: Math.round(achieved),
      percentOfTarget: Math.round((achieved / targetPerSecond) * 100),
      operations: fired.length,
      failures: fired.filter((r) => r.outcome === "failed").length,
      skipped: fired.filter((r) => r.outcome === "skipped").length,
      throttles: count(during, "throttle"),
      timeouts: count(during, "timeout"),
      retries: count(during, "retry"),
      breakerOpens: count(during, "breakerOpen"),
      p50InMs: latency.p50InMs ?? null,
      p99InMs: latency.p99InMs ?? null,
    };
  });
}

/** Per-second timeline from 0 to the end of the last step, or of the last operation if later (the drain). Pure. */
export function timeline(steps: readonly RampStep[], results: readonly StressOperationResult[], events: readonly StressEvent[]): SecondStats[] {
  const endInMs = Math.max(steps.at(-1)?.endInMs ?? 0, ...results.map((r) => r.endedAtInMs + 1));
  const seconds = Math.ceil(endInMs / 1000);
  const rows: SecondStats[] = [];
  for (let second = 0; second < seconds; second++) {
    const from = second * 1000;
    const to = from + 1000;
    const ended = results.filter((r) => r.endedAtInMs >= from && r.endedAtInMs < to);
    const latency = summarizeLatencies(ended.filter((r) => r.outcome === "success" || r.outcome === "failed").map((r) => r.latencyInMs));
    const during = events.filter((e) => e.atInMs >= from && e.atInMs < to);
    rows.push({
      second,
      requestedEntitiesPerSecond: steps.find((s) => from >= s.startInMs && from < s.endInMs)?.entitiesPerSecond ?? 0,
      achievedEntitiesPerSecond: ended.filter((r) => r.outcome === "success").reduce((sum, r) => sum + r.entities, 0),
      throttles: count(during, "throttle"),
      timeouts: count(during, "timeout"),
      retries: count(during, "retry"),
      p50InMs: latency.p50InMs ?? null,
      p99InMs: latency.p99InMs ?? null,
    });
  }
  return rows;
}

/** The first throttle or timeout, with the step it fell in; null when there was none. Pure. */
export function throttlingStart(steps: readonly RampStep[], events: readonly StressEvent[]): ThrottlingStart | null {
  let first: StressEvent | undefined;
  for (const event of events) {
    if ((event.type === "throttle" || event.type === "timeout") && (first === undefined || event.atInMs < first.atInMs)) first = event;
  }
  if (first === undefined) return null;
  const at = first.atInMs;
  const step = steps.find((s) => at >= s.startInMs && at < s.endInMs) ?? steps.at(-1);
  return { atInSeconds: Math.round(at / 100) / 10, step: (step?.index ?? 0) + 1, requestedEntitiesPerSecond: step?.entitiesPerSecond ?? 0 };
}

/**
 * What the numbers mean for the partition design, in the guide's terms. `simulatedThrottleAt`
 * is the embedded simulator's threshold, when there is one. Pure.
 */
export function verdict(steps: readonly StepStats[], start: ThrottlingStart | null, targetPerSecond: number, simulatedThrottleAt: number | null = null): string {
  const peak = steps.reduce((best, s) => (s.achievedEntitiesPerSecond > best.achievedEntitiesPerSecond ? s : best), steps[0] ?? emptyStep());
  const peakText = `Peak ${peak.achievedEntitiesPerSecond} entities/s (step ${peak.step}), ${peak.percentOfTarget} % of the ${targetPerSecond.toLocaleString("en-US")} entities/s per-partition target.`;
  if (start !== null) {
    const when = `Throttling started at ${start.atInSeconds} s (step ${start.step}, ${start.requestedEntitiesPerSecond} entities/s asked)`;
    if (simulatedThrottleAt !== null) return `${peakText} ${when}, where the simulator throttles (above ${simulatedThrottleAt} entities/s).`;
    if (peak.percentOfTarget >= 80) {
      return `${peakText} ${when}. Load near or above the target on one PartitionKey means the key is too coarse: spread this traffic over more partitions.`;
    }
    return `${peakText} ${when}, below the per-partition target: look at the account's total load (about 20,000 transactions/s per account) and at other clients sharing this partition.`;
  }
  if (peak.percentOfTarget >= 80) {
    return `${peakText} No throttling seen, but sustained load near the target on one PartitionKey means the key is too coarse: spread it over more partitions.`;
  }
  return `${peakText} No throttling seen: this partition was not pushed to its limit (the client, or the emulator, capped the rate first).`;
}

function count(events: readonly StressEvent[], type: StressEvent["type"]): number {
  let n = 0;
  for (const event of events) if (event.type === type) n++;
  return n;
}

function emptyStep(): StepStats {
  return {
    step: 0, requestedEntitiesPerSecond: 0, achievedEntitiesPerSecond: 0, percentOfTarget: 0, operations: 0, failures: 0, skipped: 0,
    throttles: 0, timeouts: 0, retries: 0, breakerOpens: 0, p50InMs: null, p99InMs: null,
  };
}
