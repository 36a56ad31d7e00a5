import type { FaultRule } from "azure-storage-resilience/testing";
import { entityCount } from "../load/entityCount.js";
import { KeyedTokenBucket } from "../load/tokenBucket.js";

/** One entry of the demo's fault schedule, as data (printed and put in the JSON summary). */
export interface DemoFault {
  /** The simulator rule name; the summary counts faults by it. */
  name: "offline" | "timeouts" | "reset-before" | "reset-after" | "throttle";
  /** What the partition's clients see. */
  description: string;
  /** The PartitionKey it hits, or undefined for every partition. */
  partition: string | undefined;
  startInMs: number;
  /** Infinity when it lasts the whole run. */
  endInMs: number;
  /** Chance per request, for the resets. */
  probability?: number;
}

/** Options of {@link planFaults}. */
export interface FaultPlanOptions {
  durationInMs: number;
  /** The PartitionKeys, hot one first. */
  partitions: readonly string[];
  /** Entities/s per partition above which requests are throttled. */
  throttleTargetPerSecond: number;
}

/** How long the partition being moved answers ServerBusy: "a few seconds", scaled to short runs. */
export const OFFLINE_WINDOW = { start: 0.4, share: 0.35, minInMs: 1_000, maxInMs: 8_000 } as const;
/** When the second partition's requests time out. */
export const TIMEOUT_WINDOW = { start: 0.55, share: 0.2, minInMs: 500, maxInMs: 5_000 } as const;
/** How long the server holds a request before answering 500 OperationTimedOut. */
export const OPERATION_TIMEOUT_DELAY_IN_MS = 1_000;
/** Chance that a request's connection is reset, before and (separately) after it reached storage. */
export const RESET_PROBABILITY = 0.01;

/**
 * The demo's fault schedule: the hot partition is moved (503 ServerBusy for a few seconds)
 * after its surge, the next one times out (500 OperationTimedOut) for a while, connections
 * reset now and then, and any partition above its entities/s target is throttled. Pure.
 */
export function planFaults(options: FaultPlanOptions): DemoFault[] {
  const { durationInMs, partitions, throttleTargetPerSecond } = options;
  const hot = partitions[0] ?? "p0";
  const second = partitions[1 % partitions.length] ?? hot;
  const window = (spec: { start: number; share: number; minInMs: number; maxInMs: number }) => {
    const startInMs = Math.round(durationInMs * spec.start);
    const length = Math.min(spec.maxInMs, Math.max(spec.minInMs, durationInMs * spec.share));
    return { startInMs, endInMs: Math.round(Math.min(durationInMs, startInMs + length)) };
  };
  return [
    { name: "offline", description: "offline while it is moved: 503 ServerBusy", partition: hot, ...window(OFFLINE_WINDOW) },
    {
      name: "timeouts",
      description: `server timeouts: 500 OperationTimedOut after ${OPERATION_TIMEOUT_DELAY_IN_MS} ms`,
      partition: second,
      ...window(TIMEOUT_WINDOW),
    },
    {
      name: "reset-before",
      description: "connection reset before the request reaches storage",
      partition: undefined,
      startInMs: 0,
      endInMs: Infinity,
      probability: RESET_PROBABILITY,
    },
    {
      name: "reset-after",
      description: "connection reset after storage applied the request",
      partition: undefined,
      startInMs: 0,
      endInMs: Infinity,
      probability: RESET_PROBABILITY,
    },
    {
      name: "throttle",
      description: `503 ServerBusy above ${throttleTargetPerSecond} entities/s per partition`,
      partition: undefined,
      startInMs: 0,
      endInMs: Infinity,
    },
  ];
}

/**
 * The simulator rules for `faults`, in order (the first matching rule wins). Each call
 * makes a fresh throttle bucket, so two runs of one plan start alike. Only requests to
 * the run's partitions are faulted; table creation and verification reads are not.
 * `now` (monotonic ms) drives the throttle's refill; tests inject their own.
 */
export function faultRules(
  faults: readonly DemoFault[],
  partitions: readonly string[],
  throttleTargetPerSecond: number,
  now: () => number = () => performance.now(),
): FaultRule[] {
  const known = new Set(partitions);
  const onDemoPartition = (partition: string | undefined) => partition !== undefined && known.has(partition);
  return faults.map((fault): FaultRule => {
    const durationInMs = fault.endInMs === Infinity ? undefined : fault.endInMs - fault.startInMs;
    const base = { name: fault.name, startInMs: fault.startInMs, durationInMs };
    const match = { partition: fault.partition ?? new RegExp(`^(?:${partitions.map(escapeRegExp).join("|")})$`) };
    switch (fault.name) {
      case "offline":
        return { ...base, kind: "serverBusy", match };
      case "timeouts":
        return { ...base, kind: "operationTimedOut", delayInMs: OPERATION_TIMEOUT_DELAY_IN_MS, match };
      case "reset-before":
        return { ...base, kind: "resetBeforeForward", probability: fault.probability, match };
      case "reset-after":
        return { ...base, kind: "resetAfterForward", probability: fault.probability, match };
      case "throttle": {
        const bucket = new KeyedTokenBucket(throttleTargetPerSecond, throttleTargetPerSecond, now);
        return {
          ...base,
          kind: "throttle",
          match: {
            predicate: (request) =>
              onDemoPartition(request.scope?.partition) && !bucket.take(request.scope?.partition ?? "", entityCount(request.path, request.body)),
          },
        };
      }
    }
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
