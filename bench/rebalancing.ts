// Benchmark 2: the rebalancing scenario, open loop. Every configuration gets the same
// operations at the same scheduled times and the same fault timeline; each operation
// starts at its time whatever the others are doing, and its latency counts from then.
import { setTimeout as sleep } from "node:timers/promises";
import { DEVSTORE_ACCOUNT_NAME } from "azure-storage-resilience/testing";
import { binCounts, percentile, round } from "../tools/report/stats.js";
import { CONFIGURATION_IDS, CONFIGURATION_LABELS, createConfiguration, type ConfigurationId } from "./tableConfigurations.js";
import {
  addFaults,
  benchTableName,
  createSeededTable,
  drawOperation,
  failureReason,
  healthyPartitions,
  outageWindow,
  perform,
  REFUSING_PARTITIONS,
  RULES,
  startSimulator,
  storedKeys,
  warmUp,
  workloadRandom,
  type FaultTimeline,
  type PlannedOperation,
} from "./workload.js";

/** The open-loop scenario's knobs. */
export interface RebalancingSettings extends FaultTimeline {
  /** Operations started per second, evenly spaced. */
  opsPerSecond: number;
  /** How long operations are started for. */
  durationInMs: number;
  /** After the last start, how long to wait for stragglers before aborting them. */
  maxDrainInMs: number;
  /** Width of a chart bin. */
  binInMs: number;
  /** Seeds the operations and the simulator. */
  seed: number;
}

export const FULL_REBALANCING_SETTINGS: RebalancingSettings = {
  opsPerSecond: 40,
  durationInMs: 20_000,
  offlineStartInMs: 4_000,
  offlineDurationInMs: 6_000,
  timeoutStartInMs: 5_000,
  timeoutDurationInMs: 5_000,
  timeoutDelayInMs: 1_500,
  resetProbability: 0.02,
  maxDrainInMs: 65_000,
  binInMs: 500,
  seed: 42,
};

export const SMOKE_REBALANCING_SETTINGS: RebalancingSettings = {
  opsPerSecond: 20,
  durationInMs: 1_000,
  offlineStartInMs: 300,
  offlineDurationInMs: 500,
  timeoutStartInMs: 400,
  timeoutDurationInMs: 400,
  timeoutDelayInMs: 100,
  resetProbability: 0.05,
  maxDrainInMs: 1_000,
  binInMs: 250,
  seed: 42,
};

/** Per-bin counts over the run, for the chart. */
export interface TimeSeries {
  binInMs: number;
  attempts: number[];
  outageAttempts: number[];
  successes: number[];
}

/** One configuration's figures. */
export interface RebalancingFigures {
  id: ConfigurationId;
  label: string;
  operations: number;
  /** Operations on partitions that can answer (all but the 403 and 501 ones). */
  couldSucceed: number;
  succeeded: number;
  /** Requests the simulator saw. */
  attempts: number;
  /** Attempts that met the outage: 503 ServerBusy on the offline partition, 500 OperationTimedOut on the other. */
  outageAttempts: number;
  offlineAttempts: number;
  timingOutAttempts: number;
  /** Attempts on the partitions that always answer 403 and 501. */
  refusedAttempts: number;
  /** Operations on those partitions (each needs exactly one attempt). */
  refusedOperations: number;
  /** Writes that failed for the caller but are in the store, by kind. */
  failedButStored: { insert: number; upsert: number };
  /** Writes reported successful but not in the store (must be 0). */
  succeededButMissing: number;
  /** Latency from the scheduled start, over operations that could succeed. */
  p50InMs: number;
  p99InMs: number;
  /** p99 of healthy partitions' operations scheduled inside the outage window. */
  healthyP99DuringOutageInMs: number;
  /** Failures by reason (status, error code or error name), operations that could succeed only. */
  failures: Record<string, number>;
  /** Operations still running at the drain deadline and aborted. */
  abandoned: number;
  elapsedInMs: number;
  series: TimeSeries;
}

export interface RebalancingResult {
  settings: RebalancingSettings;
  configurations: RebalancingFigures[];
}

interface Outcome {
  op: PlannedOperation;
  scheduledAt: number;
  endedAt: number;
  ok: boolean;
  reason?: string;
}

/** Runs every configuration in turn against Azurite's Tables endpoint `accountUrl`. */
export async function runRebalancing(
  accountUrl: string,
  settings: RebalancingSettings,
  ids: readonly ConfigurationId[] = CONFIGURATION_IDS,
  log: (line: string) => void = () => undefined,
): Promise<RebalancingResult> {
  const configurations: RebalancingFigures[] = [];
  for (const id of ids) {
    const figures = await runOne(accountUrl, settings, id);
    log(`rebalancing ${id}: ${figures.succeeded}/${figures.couldSucceed} succeeded, ${figures.attempts} attempts, ${figures.outageAttempts} into the outage`);
    configurations.push(figures);
  }
  return { settings, configurations };
}

function plan(settings: RebalancingSettings): Array<{ op: PlannedOperation; atInMs: number }> {
  const random = workloadRandom(settings.seed);
  const count = Math.floor((settings.durationInMs / 1000) * settings.opsPerSecond);
  const spacing = 1000 / settings.opsPerSecond;
  return Array.from({ length: count }, (_, i) => ({ op: drawOperation(random, i, "op-"), atInMs: i * spacing }));
}

async function runOne(accountUrl: string, settings: RebalancingSettings, id: ConfigurationId): Promise<RebalancingFigures> {
  const table = benchTableName("reb", id);
  const direct = await createSeededTable(accountUrl, table);
  const records: Array<{ timeInMs: number; partition: string | undefined; rule: string | undefined }> = [];
  let recording = false;
  let t0Epoch = 0;
  const simulator = await startSimulator(accountUrl, settings.seed, (r) => recording && records.push(r), () => t0Epoch);
  const config = createConfiguration(id, `${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, table);
  const drain = new AbortController();
  try {
    await warmUp(config);

    const schedule = plan(settings);
    const t0 = performance.now();
    t0Epoch = Date.now();
    recording = true;
    addFaults(simulator, settings);
    const pending: Array<Promise<Outcome>> = [];
    for (const { op, atInMs } of schedule) {
      const wait = t0 + atInMs - performance.now();
      if (wait > 0) await sleep(wait);
      const scheduledAt = t0 + atInMs;
      pending.push(
        perform(config, op, drain.signal).then(
          () => ({ op, scheduledAt, endedAt: performance.now(), ok: true }),
          (error: unknown) => ({ op, scheduledAt, endedAt: performance.now(), ok: false, reason: failureReason(error) }),
        ),
      );
    }
    const timer = setTimeout(() => drain.abort(), settings.maxDrainInMs);
    const outcomes = await Promise.all(pending);
    clearTimeout(timer);
    const abandoned = drain.signal.aborted ? outcomes.filter((o) => o.reason === "AbortError").length : 0;
    recording = false;
    const elapsedInMs = performance.now() - t0;
    const stored = await storedKeys(direct);
    return summarize(id, settings, outcomes, records, stored, t0, elapsedInMs, abandoned);
  } finally {
    drain.abort();
    config.dispose();
    await simulator.stop();
    await direct.deleteTable().catch(() => undefined);
  }
}

function summarize(
  id: ConfigurationId,
  settings: RebalancingSettings,
  outcomes: Outcome[],
  records: Array<{ timeInMs: number; partition: string | undefined; rule: string | undefined }>,
  stored: Set<string>,
  t0: number,
  elapsedInMs: number,
  abandoned: number,
): RebalancingFigures {
  const window = outageWindow(settings);
  const healthy = healthyPartitions(settings);
  const possible = outcomes.filter((o) => !REFUSING_PARTITIONS.includes(o.op.partition));
  const latency = (o: Outcome) => o.endedAt - o.scheduledAt;
  const healthyDuring = possible.filter((o) => {
    const at = o.scheduledAt - t0;
    return healthy.includes(o.op.partition) && at >= window.startInMs && at < window.endInMs;
  });
  const failedButStored = { insert: 0, upsert: 0 };
  let succeededButMissing = 0;
  const failures: Record<string, number> = {};
  for (const o of outcomes) {
    const inStore = stored.has(`${o.op.partition}|${o.op.rowKey}`);
    if (o.op.kind !== "read" && !o.ok && inStore) failedButStored[o.op.kind] += 1;
    if (o.op.kind !== "read" && o.ok && !inStore) succeededButMissing += 1;
    if (!o.ok && !REFUSING_PARTITIONS.includes(o.op.partition)) failures[o.reason ?? "error"] = (failures[o.reason ?? "error"] ?? 0) + 1;
  }
  const isOutage = (r: { rule: string | undefined }) => r.rule === RULES.offline || r.rule === RULES.timingOut;
  // The chart spans the run; a drain shorter than one bin would only draw a half-empty last bin.
  const totalInMs = elapsedInMs > settings.durationInMs + settings.binInMs ? elapsedInMs : settings.durationInMs;
  return {
    id,
    label: CONFIGURATION_LABELS[id],
    operations: outcomes.length,
    couldSucceed: possible.length,
    succeeded: possible.filter((o) => o.ok).length,
    attempts: records.length,
    outageAttempts: records.filter(isOutage).length,
    offlineAttempts: records.filter((r) => r.rule === RULES.offline).length,
    timingOutAttempts: records.filter((r) => r.rule === RULES.timingOut).length,
    refusedAttempts: records.filter((r) => r.partition !== undefined && REFUSING_PARTITIONS.includes(r.partition)).length,
    refusedOperations: outcomes.length - possible.length,
    failedButStored,
    succeededButMissing,
    p50InMs: round(percentile(possible.map(latency), 50) ?? Number.NaN, 1),
    p99InMs: round(percentile(possible.map(latency), 99) ?? Number.NaN, 1),
    healthyP99DuringOutageInMs: round(percentile(healthyDuring.map(latency), 99) ?? Number.NaN, 1),
    failures,
    abandoned,
    elapsedInMs: Math.round(elapsedInMs),
    series: {
      binInMs: settings.binInMs,
      attempts: binCounts(records.map((r) => r.timeInMs), settings.binInMs, totalInMs),
      outageAttempts: binCounts(records.filter(isOutage).map((r) => r.timeInMs), settings.binInMs, totalInMs),
      successes: binCounts(outcomes.filter((o) => o.ok).map((o) => o.endedAt - t0), settings.binInMs, totalInMs),
    },
  };
}
