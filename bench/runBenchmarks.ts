// Runs the benchmarks in one process, against one Azurite, and returns their results.
import { startAzurite } from "azure-storage-resilience/testing";
import { FULL_CALLER_SHAPES_SETTINGS, runCallerShapes, SMOKE_CALLER_SHAPES_SETTINGS } from "./callerShapes.js";
import { FULL_CLOSED_LOOP_SETTINGS, runClosedLoop, SMOKE_CLOSED_LOOP_SETTINGS } from "./closedLoop.js";
import { comeBackSettings, FULL_COMEBACK_SETTINGS, runComeBack, SMOKE_COMEBACK_SETTINGS, type ComeBackOverrides } from "./comeBack.js";
import { familySettings, FULL_FAMILY_SETTINGS, runFaultFamily, SMOKE_FAMILY_SETTINGS, type FamilyOverrides } from "./faultFamily.js";
import { machineInfo } from "./machine.js";
import { FULL_HOT_PARTITION_SETTINGS, runHotPartition, SMOKE_HOT_PARTITION_SETTINGS } from "./hotPartition.js";
import { FULL_MANY_PARTITIONS_SETTINGS, runManyPartitions, SMOKE_MANY_PARTITIONS_SETTINGS } from "./manyPartitions.js";
import { FULL_PACING_SETTINGS, runPacing, SMOKE_PACING_SETTINGS } from "./pacing.js";
import { FULL_OVERHEAD_SETTINGS, runOverhead, SMOKE_OVERHEAD_SETTINGS } from "./overhead.js";
import { FULL_REBALANCING_SETTINGS, runRebalancing, SMOKE_REBALANCING_SETTINGS } from "./rebalancing.js";
import { FULL_QUEUE_CONSUMER_SETTINGS, runQueueConsumer, SMOKE_QUEUE_CONSUMER_SETTINGS } from "./queueConsumer.js";
import { FULL_BLOB_DOWNLOADS_SETTINGS, runBlobDownloads, SMOKE_BLOB_DOWNLOADS_SETTINGS } from "./blobDownloads.js";
import type { BenchResults } from "./report.js";
import { tableClient } from "./tableConfigurations.js";
import { benchTableName } from "./workload.js";

/** The benchmarks by name, in the order they run. */
export const BENCHMARKS = ["overhead", "rebalancing", "closed-loop", "hot-partition", "queue-consumer", "pacing", "caller-shapes", "comeback", "family", "blob-downloads", "many-partitions"] as const;
export type BenchmarkName = (typeof BENCHMARKS)[number];

export interface RunOptions {
  /** Tiny settings that finish in seconds: for the smoke test, figures mean nothing. */
  smoke?: boolean;
  /** Which benchmarks to run. Defaults to all. */
  only?: readonly BenchmarkName[];
  /** Progress lines. Defaults to none. */
  log?: (line: string) => void;
  /** Recorded in the results as the command that produced them. */
  command?: string;
  /** Changes to the come-back benchmark's settings (seeds, faults, configurations, parts), full or smoke. */
  comeBack?: ComeBackOverrides;
  /** Changes to the fault family's settings (seeds, first seed, configurations), full or smoke. */
  family?: FamilyOverrides;
}

const OVERHEAD_PARTITIONS = 10;

/** What a stray rejection was: error name and code, and for an SDK request its method and path (no query, no host). */
function describeRejection(reason: unknown): string {
  const error = reason as { name?: unknown; code?: unknown; message?: unknown; request?: { method?: unknown; url?: unknown } } | undefined;
  const parts = [String(error?.name ?? typeof reason), error?.code === undefined ? "" : String(error.code), String(error?.message ?? "")];
  const request = error?.request;
  if (typeof request?.url === "string") {
    try {
      parts.push(`${String(request.method)} ${new URL(request.url).pathname}`);
    } catch {
      parts.push(String(request.method));
    }
  }
  return parts.filter((p) => p !== "").join(" ");
}

/** Runs the chosen benchmarks; Azurite (Tables, and Queues for the queue consumer) is started once and stopped at the end. */
export async function runBenchmarks(options: RunOptions = {}): Promise<BenchResults> {
  const smoke = options.smoke ?? false;
  const only = new Set(options.only ?? BENCHMARKS);
  const log = options.log ?? (() => undefined);
  const started = performance.now();
  const results: BenchResults = {
    schema: 1,
    startedAt: new Date().toISOString(),
    elapsedInMs: 0,
    command: options.command ?? "npm run bench",
    smoke,
    machine: machineInfo(),
  };
  // A promise rejected with nobody listening is somebody's bug: record it (with the phase) rather
  // than let Node end a five-minute run, and print it in the report.
  let phase = "start";
  const unhandled: string[] = [];
  const onUnhandled = (reason: unknown): void => {
    const line = `${phase}: ${describeRejection(reason)}`;
    unhandled.push(line);
    log(`unhandled rejection during ${line}`);
  };
  process.on("unhandledRejection", onUnhandled);
  const needsAzurite = only.has("overhead") || only.has("rebalancing") || only.has("closed-loop") || only.has("hot-partition") || only.has("queue-consumer") || only.has("pacing") || only.has("caller-shapes") || only.has("comeback") || only.has("family");
  const services = [...(needsAzurite ? ["table" as const] : []), ...(only.has("queue-consumer") ? ["queue" as const] : []), ...(only.has("blob-downloads") ? ["blob" as const] : [])];
  const azurite = services.length > 0 ? await startAzurite({ services }) : undefined;
  const progress = (line: string) => {
    phase = line;
    log(line);
  };
  try {
    if (only.has("overhead")) {
      progress("overhead: mock transport, TableClient on the mock, Azurite point reads");
      const table = benchTableName("ovh", "reads");
      const target = azurite === undefined ? undefined : { tableUrl: azurite.tableUrl, table, partitions: OVERHEAD_PARTITIONS };
      if (target !== undefined) {
        const direct = tableClient(target.tableUrl, table, { maxRetries: 0 });
        await direct.createTable();
        for (let p = 0; p < OVERHEAD_PARTITIONS; p++) await direct.createEntity({ partitionKey: `p${p}`, rowKey: "r1", value: p });
      }
      results.overhead = await runOverhead(smoke ? SMOKE_OVERHEAD_SETTINGS : FULL_OVERHEAD_SETTINGS, target);
    }
    if (only.has("rebalancing") && azurite !== undefined) {
      progress("rebalancing, open loop");
      results.rebalancing = await runRebalancing(azurite.tableUrl, smoke ? SMOKE_REBALANCING_SETTINGS : FULL_REBALANCING_SETTINGS, undefined, progress);
    }
    if (only.has("closed-loop") && azurite !== undefined) {
      progress("rebalancing, closed loop");
      results.closedLoop = await runClosedLoop(azurite.tableUrl, smoke ? SMOKE_CLOSED_LOOP_SETTINGS : FULL_CLOSED_LOOP_SETTINGS, undefined, progress);
    }
    if (only.has("hot-partition") && azurite !== undefined) {
      progress("hot partition, open loop");
      results.hotPartition = await runHotPartition(azurite.tableUrl, smoke ? SMOKE_HOT_PARTITION_SETTINGS : FULL_HOT_PARTITION_SETTINGS, undefined, progress);
    }
    if (only.has("queue-consumer") && azurite !== undefined) {
      progress("queue consumer");
      results.queueConsumer = await runQueueConsumer(azurite.tableUrl, azurite.queueUrl, smoke ? SMOKE_QUEUE_CONSUMER_SETTINGS : FULL_QUEUE_CONSUMER_SETTINGS, progress);
    }
    if (only.has("pacing") && azurite !== undefined) {
      progress("pacing: account throttled, partitions split, one and many clients on a hot partition");
      results.pacing = await runPacing(azurite.tableUrl, smoke ? SMOKE_PACING_SETTINGS : FULL_PACING_SETTINGS, progress);
    }
    if (only.has("caller-shapes") && azurite !== undefined) {
      progress("caller shapes");
      results.callerShapes = await runCallerShapes(azurite.tableUrl, smoke ? SMOKE_CALLER_SHAPES_SETTINGS : FULL_CALLER_SHAPES_SETTINGS, progress);
    }
    if (only.has("comeback") && azurite !== undefined) {
      progress("come back: the open loop through four faults, a declared pool, a sequential caller on a busy partition");
      results.comeBack = await runComeBack(azurite.tableUrl, comeBackSettings(smoke ? SMOKE_COMEBACK_SETTINGS : FULL_COMEBACK_SETTINGS, options.comeBack), progress);
    }
    if (only.has("family") && azurite !== undefined) {
      progress("a family of faults: one to three drawn per seed, with and without a trickle of other answers");
      results.family = await runFaultFamily(azurite.tableUrl, familySettings(smoke ? SMOKE_FAMILY_SETTINGS : FULL_FAMILY_SETTINGS, options.family), progress);
    }
    if (only.has("blob-downloads") && azurite !== undefined) {
      progress("blob downloads whose body is cut");
      results.blobDownloads = await runBlobDownloads(azurite.blobUrl, smoke ? SMOKE_BLOB_DOWNLOADS_SETTINGS : FULL_BLOB_DOWNLOADS_SETTINGS, progress);
    }
    // Last: its million-request loops hold the event loop for seconds at a time, long enough for
    // Azurite to close idle keep-alive sockets under any client that comes after.
    if (only.has("many-partitions")) {
      progress("many partitions");
      results.manyPartitions = await runManyPartitions(smoke ? SMOKE_MANY_PARTITIONS_SETTINGS : FULL_MANY_PARTITIONS_SETTINGS);
    }
  } finally {
    await azurite?.stop();
    // Give late rejections (sockets closed by the stops above) a turn of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 100));
    process.off("unhandledRejection", onUnhandled);
  }
  results.unhandledRejections = unhandled;
  results.elapsedInMs = Math.round(performance.now() - started);
  return results;
}
