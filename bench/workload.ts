// The rebalancing workload shared by the open-loop and closed-loop scenarios: which
// partitions misbehave and when, what the operations are, and how to check the store.
import type { TableClient } from "@azure/data-tables";
import { isRestError } from "@azure/core-rest-pipeline";
import { isBrokenCircuitError, isTaskCancelledError } from "cockatiel";
import { startRebalancingSimulator, type RebalancingSimulator } from "azure-storage-resilience/testing";
import { mulberry32 } from "../tools/load/mulberry32.js";
import type { TableConfiguration } from "./tableConfigurations.js";
import { tableClient } from "./tableConfigurations.js";

/** Ten partitions: two go through a rebalancing outage, two always refuse, six stay healthy. */
export const PARTITIONS = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"] as const;
/** Answers 503 ServerBusy during its outage window. */
export const OFFLINE_PARTITION = "p0";
/** Answers 500 OperationTimedOut (after a delay) during its outage window. */
export const TIMING_OUT_PARTITION = "p1";
/** Always 403 AuthorizationFailure. */
export const FORBIDDEN_PARTITION = "p8";
/** Always 501 NotImplemented. */
export const NOT_IMPLEMENTED_PARTITION = "p9";
export const REFUSING_PARTITIONS: readonly string[] = [FORBIDDEN_PARTITION, NOT_IMPLEMENTED_PARTITION];
export const OUTAGE_PARTITIONS: readonly string[] = [OFFLINE_PARTITION, TIMING_OUT_PARTITION];
export const HEALTHY_PARTITIONS: readonly string[] = PARTITIONS.filter((p) => !REFUSING_PARTITIONS.includes(p) && !OUTAGE_PARTITIONS.includes(p));

/** When and how the partitions misbehave, relative to the start of a run. */
export interface FaultTimeline {
  offlineStartInMs: number;
  offlineDurationInMs: number;
  timeoutStartInMs: number;
  timeoutDurationInMs: number;
  /** How long the timing-out partition holds a request before its 500 OperationTimedOut. */
  timeoutDelayInMs: number;
  /**
   * Chance of a connection reset before the request reaches storage, and (writes only) after
   * storage applied it; outside the outage window only.
   */
  resetProbability: number;
}

/** The partitions a timeline takes down (an outage of zero duration takes none). */
export function outagePartitions(t: FaultTimeline): string[] {
  const down: string[] = [];
  if (t.offlineDurationInMs > 0) down.push(OFFLINE_PARTITION);
  if (t.timeoutDurationInMs > 0) down.push(TIMING_OUT_PARTITION);
  return down;
}

/** The partitions that answer throughout: neither refusing nor taken down. */
export function healthyPartitions(t: FaultTimeline): string[] {
  const down = outagePartitions(t);
  return PARTITIONS.filter((p) => !REFUSING_PARTITIONS.includes(p) && !down.includes(p));
}

/** The window in which any outage partition is down. */
export function outageWindow(t: FaultTimeline): { startInMs: number; endInMs: number } {
  const windows: Array<[number, number]> = [];
  if (t.offlineDurationInMs > 0) windows.push([t.offlineStartInMs, t.offlineStartInMs + t.offlineDurationInMs]);
  if (t.timeoutDurationInMs > 0) windows.push([t.timeoutStartInMs, t.timeoutStartInMs + t.timeoutDurationInMs]);
  if (windows.length === 0) return { startInMs: 0, endInMs: 0 };
  return { startInMs: Math.min(...windows.map((w) => w[0])), endInMs: Math.max(...windows.map((w) => w[1])) };
}

/** Rule names, as the simulator records them. */
export const RULES = {
  offline: "offline",
  timingOut: "timing-out",
  forbidden: "forbidden",
  notImplemented: "not-implemented",
  resetBefore: "reset-before",
  resetAfter: "reset-after",
} as const;

/** Schedules the timeline's faults on `simulator`, starting now. First matching rule wins. */
export function addFaults(simulator: RebalancingSimulator, t: FaultTimeline): void {
  simulator.addFault({
    name: RULES.offline,
    kind: "serverBusy",
    match: { partition: OFFLINE_PARTITION },
    startInMs: t.offlineStartInMs,
    durationInMs: t.offlineDurationInMs,
  });
  simulator.addFault({
    name: RULES.timingOut,
    kind: "operationTimedOut",
    match: { partition: TIMING_OUT_PARTITION },
    startInMs: t.timeoutStartInMs,
    durationInMs: t.timeoutDurationInMs,
    delayInMs: t.timeoutDelayInMs,
  });
  simulator.addFault({ name: RULES.forbidden, kind: "status", status: 403, errorCode: "AuthorizationFailure", match: { partition: FORBIDDEN_PARTITION } });
  simulator.addFault({ name: RULES.notImplemented, kind: "status", status: 501, errorCode: "NotImplemented", match: { partition: NOT_IMPLEMENTED_PARTITION } });
  if (t.resetProbability === 0) return;
  // Resets only outside the outage window, so that the healthy partitions' latency during the
  // outage shows spill-over from the outage, not the retry of a reset that happened to land there.
  const window = outageWindow(t);
  for (const [startInMs, durationInMs] of [
    [0, window.startInMs],
    [window.endInMs, Infinity],
  ] as const) {
    simulator.addFault({ name: RULES.resetBefore, kind: "resetBeforeForward", match: { partition: /^p/ }, probability: t.resetProbability, startInMs, durationInMs });
    simulator.addFault({
      name: RULES.resetAfter,
      kind: "resetAfterForward",
      match: { partition: /^p/, predicate: (request) => request.method !== "GET" },
      probability: t.resetProbability,
      startInMs,
      durationInMs,
    });
  }
}

/** What an operation does: read a seeded entity, insert a new one, or upsert (Replace) a new one. */
export type OperationKind = "read" | "insert" | "upsert";

/** One operation of the workload. */
export interface PlannedOperation {
  index: number;
  partition: string;
  kind: OperationKind;
  /** The row written (inserts and upserts) or read. */
  rowKey: string;
}

/** Seeded entities per partition that reads pick from. */
export const SEED_ROWS = 10;

/** Draws operation `index` from `random`: a uniform partition; half reads, a quarter inserts, a quarter upserts. */
export function drawOperation(random: () => number, index: number, rowPrefix: string): PlannedOperation {
  const partition = PARTITIONS[Math.floor(random() * PARTITIONS.length)] as string;
  const draw = random();
  const kind: OperationKind = draw < 0.5 ? "read" : draw < 0.75 ? "insert" : "upsert";
  const rowKey = kind === "read" ? `seed-${Math.floor(random() * SEED_ROWS)}` : `${rowPrefix}${index}`;
  return { index, partition, kind, rowKey };
}

/** A seeded generator for one run (the same seed gives every configuration the same operations). */
export function workloadRandom(seed: number): () => number {
  return mulberry32(seed);
}

/** Performs one operation through the configuration. */
export function perform(config: Pick<TableConfiguration, "run">, op: PlannedOperation, signal: AbortSignal): Promise<unknown> {
  const entity = { partitionKey: op.partition, rowKey: op.rowKey, index: op.index };
  switch (op.kind) {
    case "read":
      return config.run(op.partition, (client, s) => client.getEntity(op.partition, op.rowKey, { abortSignal: s }), signal);
    case "insert":
      return config.run(op.partition, (client, s) => client.createEntity(entity, { abortSignal: s }), signal);
    case "upsert":
      return config.run(op.partition, (client, s) => client.upsertEntity(entity, "Replace", { abortSignal: s }), signal);
  }
}

/** A short, bounded description of why an operation failed: a status, an error code or an error name. */
export function failureReason(error: unknown): string {
  if (isRestError(error)) {
    if (error.statusCode !== undefined) return String(error.statusCode);
    return error.code ?? "RestError";
  }
  // cockatiel's errors keep the name "Error": tell them apart by their markers.
  if (isBrokenCircuitError(error)) return "BrokenCircuitError";
  if (isTaskCancelledError(error)) return "TaskCancelledError";
  const named = error as { name?: unknown; code?: unknown } | undefined;
  if (typeof named?.code === "string") return named.code;
  return typeof named?.name === "string" ? named.name : "error";
}

/** Creates `table` on Azurite directly and seeds `SEED_ROWS` entities in every partition. */
export async function createSeededTable(accountUrl: string, table: string): Promise<TableClient> {
  // Plumbing, not measured: the SDK's default retry rides out a stale keep-alive socket (clients share one HttpClient).
  const direct = tableClient(accountUrl, table);
  await direct.createTable();
  for (const partition of PARTITIONS) {
    await direct.submitTransaction(
      Array.from({ length: SEED_ROWS }, (_, i) => ["upsert", { partitionKey: partition, rowKey: `seed-${i}` }] as ["upsert", { partitionKey: string; rowKey: string }]),
    );
  }
  return direct;
}

/** Every `partition|rowKey` stored in the table, read from Azurite directly. */
export async function storedKeys(direct: TableClient): Promise<Set<string>> {
  const keys = new Set<string>();
  for await (const entity of direct.listEntities({ queryOptions: { select: ["PartitionKey", "RowKey"] } })) {
    keys.add(`${entity.partitionKey}|${entity.rowKey}`);
  }
  return keys;
}

/** Opens connections and settles the JIT before the clock starts; a failure here is not part of any figure. */
export async function warmUp(config: Pick<TableConfiguration, "client">): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await config.client.getEntity(HEALTHY_PARTITIONS[i % HEALTHY_PARTITIONS.length] as string, "seed-0").catch(() => undefined);
  }
}

/** Starts a simulator in front of Azurite that hands every record, timed from `t0Epoch`, to `sink`. */
export function startSimulator(
  accountUrl: string,
  seed: number,
  sink: (record: { timeInMs: number; partition: string | undefined; rule: string | undefined; method: string }) => void,
  t0Epoch: () => number,
): Promise<RebalancingSimulator> {
  return startRebalancingSimulator({
    target: new URL(accountUrl).origin,
    seed,
    service: "table",
    onRecord: (record) => sink({ timeInMs: record.time - t0Epoch(), partition: record.scope?.partition, rule: record.ruleName, method: record.method }),
  });
}

/** A table name unique to this process and configuration. */
export function benchTableName(prefix: string, id: string): string {
  return `${prefix}${id}${process.pid}x${Date.now().toString(36)}`.replace(/[^A-Za-z0-9]/g, "");
}
