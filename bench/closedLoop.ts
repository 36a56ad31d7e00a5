// Benchmark 4: the rebalancing scenario, closed loop. A fixed pool of workers each runs
// one operation after another; a worker stuck retrying into an offline partition is a
// worker the healthy partitions do not get (head-of-line blocking).
import { DEVSTORE_ACCOUNT_NAME } from "azure-storage-resilience/testing";
import { binCounts, round } from "../tools/report/stats.js";
import { CLOSED_LOOP_CONFIGURATION_IDS, CONFIGURATION_LABELS, createConfiguration, type ConfigurationId } from "./tableConfigurations.js";
import {
  addFaults,
  benchTableName,
  createSeededTable,
  drawOperation,
  healthyPartitions,
  outagePartitions,
  outageWindow,
  perform,
  REFUSING_PARTITIONS,
  RULES,
  startSimulator,
  warmUp,
  workloadRandom,
  type FaultTimeline,
  type PlannedOperation,
} from "./workload.js";

/** The closed-loop scenario's knobs. */
export interface ClosedLoopSettings extends FaultTimeline {
  /** Workers, each running one operation at a time. */
  workers: number;
  /** How long workers start operations for. */
  durationInMs: number;
  /** The first part of the run, left out of the "before" throughput (connections, JIT). */
  warmupInMs: number;
  maxDrainInMs: number;
  binInMs: number;
  seed: number;
}

// Only the offline partition misbehaves here (p1 stays healthy, no resets): in a closed loop a
// 1.5 s timeout or the backoff after a reset occupies a worker whatever the configuration, and
// would hide what this scenario is about, workers held by retries into the offline partition.
export const FULL_CLOSED_LOOP_SETTINGS: ClosedLoopSettings = {
  workers: 8,
  durationInMs: 16_000,
  warmupInMs: 1_000,
  offlineStartInMs: 4_000,
  offlineDurationInMs: 6_000,
  timeoutStartInMs: 4_000,
  timeoutDurationInMs: 0,
  timeoutDelayInMs: 0,
  resetProbability: 0,
  maxDrainInMs: 65_000,
  binInMs: 500,
  seed: 43,
};

export const SMOKE_CLOSED_LOOP_SETTINGS: ClosedLoopSettings = {
  workers: 3,
  durationInMs: 1_000,
  warmupInMs: 100,
  offlineStartInMs: 300,
  offlineDurationInMs: 400,
  timeoutStartInMs: 300,
  timeoutDurationInMs: 0,
  timeoutDelayInMs: 0,
  resetProbability: 0,
  maxDrainInMs: 800,
  binInMs: 250,
  seed: 43,
};

/** One configuration's figures. */
export interface ClosedLoopFigures {
  id: ConfigurationId;
  label: string;
  operations: number;
  succeeded: number;
  /** Operations not on the partitions that always refuse (403, 501): every one can succeed if retried long enough. */
  couldSucceed: number;
  /** Of those, how many succeeded. */
  succeededOfCould: number;
  /** Healthy partitions' operations that succeeded inside the outage window. */
  healthyDoneDuring: number;
  /** What the "before" rate would have done in the outage window: the healthy work due during it. */
  healthyDueDuring: number;
  /** Successful operations per second on healthy partitions, before, during and after the outage. */
  healthyPerSecondBefore: number;
  healthyPerSecondDuring: number;
  healthyPerSecondAfter: number;
  /** During / before. */
  healthyDuringRatio: number;
  /** Share of all worker time inside the outage window spent on operations for the partitions that are down. */
  workerTimeOnOutagePartitions: number;
  /** Attempts that met the outage (503 ServerBusy or 500 OperationTimedOut). */
  outageAttempts: number;
  series: { binInMs: number; healthySuccesses: number[] };
}

export interface ClosedLoopResult {
  settings: ClosedLoopSettings;
  configurations: ClosedLoopFigures[];
}

interface Done {
  op: PlannedOperation;
  startedAt: number;
  endedAt: number;
  ok: boolean;
}

/** Runs every configuration in turn against Azurite's Tables endpoint `accountUrl`. */
export async function runClosedLoop(
  accountUrl: string,
  settings: ClosedLoopSettings,
  ids: readonly ConfigurationId[] = CLOSED_LOOP_CONFIGURATION_IDS,
  log: (line: string) => void = () => undefined,
): Promise<ClosedLoopResult> {
  const configurations: ClosedLoopFigures[] = [];
  for (const id of ids) {
    const figures = await runOne(accountUrl, settings, id);
    log(
      `closed loop ${id}: healthy ${figures.healthyPerSecondBefore}/s before, ${figures.healthyPerSecondDuring}/s during ` +
        `(${figures.healthyDoneDuring}/${figures.healthyDueDuring} of the work due), ${Math.round(figures.workerTimeOnOutagePartitions * 100)}% of worker time on outage partitions, ` +
        `${figures.succeededOfCould}/${figures.couldSucceed} retriable operations succeeded`,
    );
    configurations.push(figures);
  }
  return { settings, configurations };
}

async function runOne(accountUrl: string, settings: ClosedLoopSettings, id: ConfigurationId): Promise<ClosedLoopFigures> {
  const table = benchTableName("hol", id);
  const direct = await createSeededTable(accountUrl, table);
  let outageAttempts = 0;
  let recording = false;
  let t0Epoch = 0;
  const simulator = await startSimulator(
    accountUrl,
    settings.seed,
    (r) => {
      if (recording && (r.rule === RULES.offline || r.rule === RULES.timingOut)) outageAttempts += 1;
    },
    () => t0Epoch,
  );
  const config = createConfiguration(id, `${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, table, settings.workers);
  const drain = new AbortController();
  try {
    await warmUp(config);
    const done: Done[] = [];
    const t0 = performance.now();
    t0Epoch = Date.now();
    recording = true;
    addFaults(simulator, settings);
    let index = 0;
    const worker = async (w: number): Promise<void> => {
      const random = workloadRandom(settings.seed * 100 + w);
      while (performance.now() - t0 < settings.durationInMs && !drain.signal.aborted) {
        const op = drawOperation(random, index++, "op-");
        const startedAt = performance.now() - t0;
        const ok = await perform(config, op, drain.signal).then(
          () => true,
          () => false,
        );
        done.push({ op, startedAt, endedAt: performance.now() - t0, ok });
      }
    };
    const timer = setTimeout(() => drain.abort(), settings.durationInMs + settings.maxDrainInMs);
    await Promise.all(Array.from({ length: settings.workers }, (_, w) => worker(w)));
    clearTimeout(timer);
    recording = false;
    return summarize(id, settings, done, outageAttempts);
  } finally {
    drain.abort();
    config.dispose();
    await simulator.stop();
    await direct.deleteTable().catch(() => undefined);
  }
}

function summarize(id: ConfigurationId, settings: ClosedLoopSettings, done: Done[], outageAttempts: number): ClosedLoopFigures {
  const window = outageWindow(settings);
  const healthy = healthyPartitions(settings);
  const down = outagePartitions(settings);
  const healthyOk = done.filter((d) => d.ok && healthy.includes(d.op.partition));
  const could = done.filter((d) => !REFUSING_PARTITIONS.includes(d.op.partition));
  const rate = (from: number, to: number): number =>
    to > from ? round((healthyOk.filter((d) => d.endedAt >= from && d.endedAt < to).length * 1000) / (to - from), 1) : Number.NaN;
  const before = rate(settings.warmupInMs, window.startInMs);
  const during = rate(window.startInMs, window.endInMs);
  const after = rate(window.endInMs, settings.durationInMs);
  let outageWorkerTime = 0;
  for (const d of done) {
    if (!down.includes(d.op.partition)) continue;
    outageWorkerTime += Math.max(0, Math.min(d.endedAt, window.endInMs) - Math.max(d.startedAt, window.startInMs));
  }
  const windowWorkerTime = settings.workers * (window.endInMs - window.startInMs);
  return {
    id,
    label: CONFIGURATION_LABELS[id],
    operations: done.length,
    succeeded: done.filter((d) => d.ok).length,
    couldSucceed: could.length,
    succeededOfCould: could.filter((d) => d.ok).length,
    healthyDoneDuring: healthyOk.filter((d) => d.endedAt >= window.startInMs && d.endedAt < window.endInMs).length,
    healthyDueDuring: Math.round((before * (window.endInMs - window.startInMs)) / 1000),
    healthyPerSecondBefore: before,
    healthyPerSecondDuring: during,
    healthyPerSecondAfter: after,
    healthyDuringRatio: round(during / before, 2),
    workerTimeOnOutagePartitions: round(outageWorkerTime / windowWorkerTime, 3),
    outageAttempts,
    series: {
      binInMs: settings.binInMs,
      healthySuccesses: binCounts(
        healthyOk.map((d) => d.endedAt),
        settings.binInMs,
        settings.durationInMs,
      ),
    },
  };
}
