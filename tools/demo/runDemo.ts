import { setTimeout as sleep } from "node:timers/promises";
import { AzureNamedKeyCredential, TableClient, type TransactionAction } from "@azure/data-tables";
import { Registry } from "prom-client";
import { installResilience, startMetricsServer, type ResilienceHandle } from "azure-storage-resilience";
import { startAzurite, startRebalancingSimulator, type RebalancingSimulator, type RunningAzurite } from "azure-storage-resilience/testing";
import { AZURE_PARTITION_TARGET_PER_SECOND, BASELINE_LABEL, RESILIENT_LABEL, type DemoSummary, type MetricsSummary, type RunSummary, type SummaryFault } from "./demoSummary.js";
import type { DemoOptions } from "./demoOptions.js";
import { executeOperation } from "./executeOperation.js";
import { faultRules, planFaults, type DemoFault } from "./faultPlan.js";
import { runOpenLoop } from "../load/openLoop.js";
import type { OperationResult } from "./operationResult.js";
import type { ProgressSnapshot } from "./progress.js";
import { startProgress, type ProgressStream } from "./progressPrinter.js";
import { failureCauses, tabulateRun } from "./runStats.js";
import { storedKey, verifyWrites } from "./verifyWrites.js";
import { WireTally } from "./wireTally.js";
import { planWorkload, seededRowKey, SEEDED_ROWS, SURGE_MULTIPLIER, throttleTargetPerSecond, type WorkloadPlan } from "./workload.js";

/** Where the demo writes while it runs. */
export interface DemoIo {
  /** Status lines (starting, endpoints). */
  log: (line: string) => void;
  /** Where the live progress goes. */
  progress: ProgressStream;
  /** Aborted by Ctrl-C: stop firing, cut in-flight operations off, still summarise. */
  signal: AbortSignal;
}

/** After the last operation is fired, how long in-flight ones may take before they are cut off. */
export const DRAIN_TIMEOUT_IN_MS = 30_000;

/** One client's run: its own simulator, table and tallies. */
interface DemoRun {
  label: string;
  simulator: RebalancingSimulator;
  client: TableClient;
  direct: TableClient;
  tally: WireTally;
  results: OperationResult[];
  inFlight: Map<string, number>;
  fired: number;
  handle: ResilienceHandle | undefined;
  breakerOpens: Map<string, number>;
}

/**
 * The demo: Azurite behind two rebalancing simulators, the same open-loop workload and
 * fault schedule through a resilient client and (unless turned off) a client with the
 * SDK's default retry, live progress, `/metrics`, and a summary verified against the store.
 * Everything it starts is stopped before it returns, also after Ctrl-C.
 */
export async function runDemo(options: DemoOptions, io: DemoIo): Promise<DemoSummary> {
  const durationInMs = options.durationInSeconds * 1000;
  const plan = planWorkload({ durationInMs, ratePerSecond: options.ratePerSecond, partitions: options.partitions, seed: options.seed });
  const target = throttleTargetPerSecond(options.ratePerSecond, options.partitions);
  const faults = planFaults({ durationInMs, partitions: plan.partitions, throttleTargetPerSecond: target });
  const cleanups: Array<() => Promise<void> | void> = [];
  try {
    io.log("Starting Azurite (Tables, in memory, loopback) and the rebalancing simulator...");
    // Its own process group: a terminal's Ctrl-C reaches only us, and we stop Azurite after the summary.
    const azurite = await startAzurite({ services: ["table"], detached: true });
    cleanups.push(() => azurite.stop());
    const registry = new Registry();
    const metricsServer = await startMetricsServer({ port: 0, registry });
    cleanups.push(() => metricsServer.close());
    const resilient = await startRun("demoresilient", RESILIENT_LABEL, azurite, plan, options.seed, registry);
    cleanups.push(() => stopRun(resilient));
    const baseline = options.baseline ? await startRun("demobaseline", BASELINE_LABEL, azurite, plan, options.seed, undefined) : undefined;
    if (baseline !== undefined) cleanups.push(() => stopRun(baseline));

    io.log(`Metrics: ${metricsServer.url}`);
    io.log(
      `Running ${options.durationInSeconds} s at ${options.ratePerSecond} ops/s over ${plan.partitions.length} partitions` +
        ` (${plan.operations.length} operations per client${baseline === undefined ? "" : ", resilient and SDK default side by side"}); Ctrl-C stops early.`,
    );
    const outcome = await drive(plan, faults, target, resilient, baseline, metricsServer, io, durationInMs);
    io.log("Verifying against the store...");
    const [resilientRun, baselineRun] = await Promise.all([summarizeRun(resilient, plan), baseline === undefined ? null : summarizeRun(baseline, plan)]);
    return {
      command: "demo",
      options: { ...options },
      interrupted: io.signal.aborted,
      ranForSeconds: round1(outcome.ranForInMs / 1000),
      throttleTarget: {
        entitiesPerSecondPerPartition: target,
        azureEntitiesPerSecondPerPartition: AZURE_PARTITION_TARGET_PER_SECOND,
        scaledDownBy: Math.round(AZURE_PARTITION_TARGET_PER_SECOND / target),
      },
      hotPartition: plan.hotPartition,
      surge: { startInSeconds: round1(plan.surge.startInMs / 1000), endInSeconds: round1(plan.surge.endInMs / 1000), multiplier: SURGE_MULTIPLIER },
      faults: faults.map(toSummaryFault),
      metrics: { url: metricsServer.url, scrape: outcome.scrape },
      resilient: resilientRun,
      baseline: baselineRun,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  }
}

async function startRun(
  table: string,
  label: string,
  azurite: RunningAzurite,
  plan: WorkloadPlan,
  seed: number,
  registry: Registry | undefined,
): Promise<DemoRun> {
  const tally = new WireTally();
  const simulator = await startRebalancingSimulator({ target: new URL(azurite.tableUrl).origin, seed, onRecord: (record) => tally.add(record) });
  const credential = new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey);
  const direct = new TableClient(azurite.tableUrl, table, credential, { allowInsecureConnection: true });
  await direct.createTable();
  for (const partition of plan.partitions) {
    const rows: TransactionAction[] = Array.from({ length: SEEDED_ROWS }, (_, i) => ["create", { partitionKey: partition, rowKey: seededRowKey(i), seeded: true }]);
    await direct.submitTransaction(rows);
  }
  // No retryOptions: the baseline keeps the SDK's defaults; installResilience replaces them on the other.
  const client = new TableClient(`${simulator.url}/${azurite.accountName}`, table, credential, { allowInsecureConnection: true });
  const run: DemoRun = { label, simulator, client, direct, tally, results: [], inFlight: new Map(), fired: 0, handle: undefined, breakerOpens: new Map() };
  if (registry !== undefined) {
    // The package's defaults, metrics on the demo's own registry (with the bounded partition label).
    const handle = installResilience(client, { metrics: { registry, partitionLabel: true } });
    run.handle = handle;
    if (handle.circuitBreaker !== undefined) {
      handle.circuitBreaker.onTransition((transition) => {
        if (transition.to !== "open") return;
        const partition = partitionOfScopeKey(transition.scope);
        run.breakerOpens.set(partition, (run.breakerOpens.get(partition) ?? 0) + 1);
      });
    }
  }
  return run;
}

async function stopRun(run: DemoRun): Promise<void> {
  run.handle?.dispose();
  await run.simulator.stop();
}

/** The scope key's last field is the PartitionKey; the demo's keys hold no `|` to escape. */
function partitionOfScopeKey(scope: string): string {
  return scope.slice(scope.lastIndexOf("|") + 1);
}

interface DriveOutcome {
  ranForInMs: number;
  scrape: MetricsSummary["scrape"];
}

/** Adds the faults, fires both workloads from one clock, scrapes /metrics halfway, drains. */
async function drive(
  plan: WorkloadPlan,
  faults: readonly DemoFault[],
  target: number,
  resilient: DemoRun,
  baseline: DemoRun | undefined,
  metricsServer: Awaited<ReturnType<typeof startMetricsServer>>,
  io: DemoIo,
  durationInMs: number,
): Promise<DriveOutcome> {
  const runs = baseline === undefined ? [resilient] : [resilient, baseline];
  const inFlight = new AbortController();
  const onInterrupt = () => inFlight.abort();
  io.signal.addEventListener("abort", onInterrupt, { once: true });
  const startedAt = performance.now();
  for (const run of runs) for (const rule of faultRules(faults, plan.partitions, target)) run.simulator.addFault(rule);
  const progress = startProgress(io.progress, () => snapshot(plan, resilient, baseline, performance.now() - startedAt, durationInMs));
  let scrape: MetricsSummary["scrape"] = null;
  const scraping = sleep(durationInMs / 2, undefined, { signal: io.signal }).then(
    async () => (scrape = await scrapeMetrics(metricsServer.url, (performance.now() - startedAt) / 1000)),
    () => undefined,
  );
  try {
    const fired = await Promise.all(runs.map((run) => runOpenLoop(plan.operations, (op) => fire(run, op, startedAt, inFlight.signal), { signal: io.signal })));
    const ranForInMs = performance.now() - startedAt;
    const all = fired.flat();
    const drained = Promise.allSettled(all);
    await Promise.race([drained, sleep(DRAIN_TIMEOUT_IN_MS, undefined, { signal: inFlight.signal }).catch(() => undefined)]);
    inFlight.abort();
    await drained;
    await scraping;
    return { ranForInMs, scrape };
  } finally {
    io.signal.removeEventListener("abort", onInterrupt);
    progress.stop();
    for (const run of runs) run.simulator.clearFaults();
  }
}

async function fire(run: DemoRun, op: WorkloadPlan["operations"][number], startedAt: number, signal: AbortSignal): Promise<void> {
  run.fired++;
  run.inFlight.set(op.partition, (run.inFlight.get(op.partition) ?? 0) + 1);
  const result = await executeOperation(run.client, op, startedAt, signal);
  run.inFlight.set(op.partition, (run.inFlight.get(op.partition) ?? 1) - 1);
  run.results.push(result);
}

async function scrapeMetrics(url: string, atInSeconds: number): Promise<NonNullable<MetricsSummary["scrape"]>> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    const body = await response.text();
    const azureStorageSeries = body.split("\n").filter((line) => line.startsWith("azure_storage_")).length;
    return { atInSeconds: round1(atInSeconds), status: response.status, azureStorageSeries };
  } catch (error) {
    return { atInSeconds: round1(atInSeconds), status: null, azureStorageSeries: 0, error: (error as Error)?.name ?? "error" };
  }
}

function snapshot(plan: WorkloadPlan, resilient: DemoRun, baseline: DemoRun | undefined, elapsedInMs: number, durationInMs: number): ProgressSnapshot {
  const open = new Set((resilient.handle?.circuitBreaker?.openScopes() ?? []).map(partitionOfScopeKey));
  const done = (run: DemoRun, partition?: string) => run.results.filter((r) => partition === undefined || r.partition === partition);
  const rows = plan.partitions.map((partition) => {
    const results = done(resilient, partition);
    const wire = resilient.tally.of(partition);
    const inFlight = resilient.inFlight.get(partition) ?? 0;
    return {
      partition,
      done: results.length,
      inFlight,
      failed: results.filter((r) => r.outcome !== "success").length,
      retries: wire.retries,
      throttles: wire.throttles,
      circuitOpen: open.has(partition),
    };
  });
  const result: ProgressSnapshot = { elapsedInMs, durationInMs, hotPartition: plan.hotPartition, resilient: rows };
  if (baseline !== undefined) {
    const wire = plan.partitions.map((p) => baseline.tally.of(p));
    const results = done(baseline);
    result.baseline = {
      done: results.length,
      failed: results.filter((r) => r.outcome !== "success").length,
      retries: wire.reduce((sum, w) => sum + w.retries, 0),
      throttles: wire.reduce((sum, w) => sum + w.throttles, 0),
    };
  }
  return result;
}

async function summarizeRun(run: DemoRun, plan: WorkloadPlan): Promise<RunSummary> {
  const stored = new Set<string>();
  for await (const entity of run.direct.listEntities()) stored.add(storedKey(entity.partitionKey ?? "", entity.rowKey ?? ""));
  const breaker = run.handle?.circuitBreaker === undefined ? undefined : (partition: string) => run.breakerOpens.get(partition) ?? 0;
  return {
    label: run.label,
    planned: plan.operations.length,
    fired: run.fired,
    table: tabulateRun(plan.partitions, run.results, (partition) => run.tally.of(partition), breaker),
    failureCauses: failureCauses(run.results),
    verification: verifyWrites(run.results, stored),
  };
}

function toSummaryFault(fault: DemoFault): SummaryFault {
  const summary: SummaryFault = {
    name: fault.name,
    description: fault.description,
    partition: fault.partition ?? null,
    startInSeconds: round1(fault.startInMs / 1000),
    endInSeconds: fault.endInMs === Infinity ? null : round1(fault.endInMs / 1000),
  };
  if (fault.probability !== undefined) summary.probability = fault.probability;
  return summary;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
