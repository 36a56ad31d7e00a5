// Benchmark: caller shapes (issue 23). The same faults met by callers of different shapes,
// over several seeds, min and max reported:
// - open loop (each operation its own caller), steady and bursty, with the package's defaults,
//   a declared open-loop caller and the SDK's default retry, in four faults: a rebalancing
//   (one partition offline, one timing out, rare resets), an endpoint frozen then reset, an
//   endpoint refusing connections, an account throttled;
// - pools of workers (4, 16, 64) consuming a queue of messages, fed at a fixed rate below
//   saturation or a backlog that keeps them saturated, with one partition offline and one timing
//   out: a declared bounded caller, a fail-fast caller and the SDK client with retries off, all in
//   the same run. Each worker follows the queue-consumer recipe of docs/flow-control.md: ask
//   partitionStatus before sending, and send a message that was refused or failed (not 409) back
//   to the queue, invisible for the `retryAfterInMs` it carries (1 s without one), in whole
//   seconds as a queue counts them; a run ends when every message is processed. The queue is
//   in memory (bench/queueConsumer.ts runs the recipe on a real Azurite queue): nine pools side
//   by side would otherwise load the machine with the queue's own calls.
// Within a run every stream has a table and a client of its own and they run side by side
// behind one simulator, so the faults hit them at the same moments. The open-loop faults run
// at the same time too, each behind a simulator of its own, to keep a seed under a minute;
// all but the freeze, which runs alone (see RUN_ALONE).
import { setTimeout as sleep } from "node:timers/promises";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { getRetryInfo, installResilience, isCircuitOpenError, isPartitionBusyError, type InstallResilienceOptions } from "../src/index.js";
import { DEVSTORE_ACCOUNT_NAME, startRebalancingSimulator, type FaultRule, type RebalancingSimulator } from "azure-storage-resilience/testing";
import { tableClient } from "./tableConfigurations.js";
import {
  benchTableName,
  createSeededTable,
  drawOperation,
  failureReason,
  OFFLINE_PARTITION,
  OUTAGE_PARTITIONS,
  perform,
  RULES,
  TIMING_OUT_PARTITION,
  warmUp,
  workloadRandom,
  type PlannedOperation,
} from "./workload.js";

/** How the benchmark's callers declare themselves (issue 23's `caller` option). */
export type CallerShape = { open: true } | { concurrency: number } | { failFast: true };

/**
 * The one place a caller shape becomes install options, and the words the report uses for it.
 */
export function callerInstallOptions(shape: CallerShape): { options: InstallResilienceOptions; declared: string } {
  if ("open" in shape) return { options: {}, declared: "defaults (open loop)" };
  return { options: { caller: shape }, declared: "failFast" in shape ? "caller: { failFast: true }" : `caller: { concurrency: ${shape.concurrency} }, each message in handle.work` };
}

/** The faults of the open-loop part. */
export const OPEN_LOOP_SCENARIOS = ["rebalancing", "frozen", "refused", "throttled"] as const;
export type OpenLoopScenario = (typeof OPEN_LOOP_SCENARIOS)[number];
export const TRAFFIC_SHAPES = ["steady", "bursty"] as const;
export type TrafficShape = (typeof TRAFFIC_SHAPES)[number];
/** The open loop's configurations: the package's defaults (an open-loop caller), the SDK's default retry. */
export const OPEN_LOOP_CONFIGURATIONS = ["defaults", "sdk-default"] as const;
export type OpenLoopConfiguration = (typeof OPEN_LOOP_CONFIGURATIONS)[number];
/** The pools' configurations: a declared bounded caller, a fail-fast one, the SDK client with retries off. */
export const POOL_CONFIGURATIONS = ["bounded", "fail-fast", "no-retry"] as const;
export type PoolConfiguration = (typeof POOL_CONFIGURATIONS)[number];
export const POOL_FEEDS = ["below-saturation", "saturated"] as const;
export type PoolFeed = (typeof POOL_FEEDS)[number];

/** Stop reasons (`getRetryInfo(error).stopReason`) of an operation failed for a local reason. */
const LOCAL_STOP_REASONS: ReadonlySet<string> = new Set(["circuit-open", "partition-busy", "budget-exhausted", "caller-busy"]);

export interface CallerShapesSettings {
  /** Seeds run, from `firstSeed` on. */
  seeds: number;
  firstSeed: number;
  openLoop: {
    /** Operations started per second by each stream. */
    opsPerSecond: number;
    /**
     * Faster streams for some faults. A freeze or a throttled account empties the retry budget
     * only when the operations caught in it outnumber what the budget's floor (10 retries/s)
     * and ratio (50 % of requests) allow, which takes about 100 operations/s over 3 s.
     */
    opsPerSecondByScenario: Partial<Record<OpenLoopScenario, number>>;
    /** Bursty traffic: every this often, the interval's operations all start at once. */
    burstEveryInMs: number;
    /** From the start of a run to the start of its fault. */
    leadInMs: number;
    /** Operations keep starting this long after the fault ends. */
    tailInMs: number;
    /** Rebalancing: p0 answers 503 ServerBusy this long; p1 answers 500 OperationTimedOut (after `timeoutDelayInMs`) for `timeoutInMs`, from `timeoutStartInMs` after the lead. */
    offlineInMs: number;
    timeoutStartInMs: number;
    timeoutInMs: number;
    timeoutDelayInMs: number;
    /** Rebalancing: the chance of a reset before forwarding, and (writes) after, outside the outage. */
    resetProbability: number;
    frozenInMs: number;
    refusedInMs: number;
    throttledInMs: number;
    /** After the last start, how long stragglers get before they are aborted. */
    maxDrainInMs: number;
  };
  pools: {
    sizes: number[];
    /** Each operation holds its worker this much longer (the rest of the message's work). */
    holdInMs: number;
    /** Below saturation: arrivals per worker per second (a worker can do about 1000 / holdInMs). */
    fedPerWorkerPerSecond: number;
    leadInMs: number;
    tailInMs: number;
    offlineInMs: number;
    timeoutStartInMs: number;
    timeoutInMs: number;
    timeoutDelayInMs: number;
    maxDrainInMs: number;
  };
}

export const FULL_CALLER_SHAPES_SETTINGS: CallerShapesSettings = {
  seeds: 10,
  firstSeed: 1,
  openLoop: {
    opsPerSecond: 20,
    opsPerSecondByScenario: { frozen: 150, throttled: 60 },
    burstEveryInMs: 500,
    leadInMs: 500,
    tailInMs: 500,
    offlineInMs: 4_000,
    timeoutStartInMs: 500,
    timeoutInMs: 2_500,
    timeoutDelayInMs: 1_000,
    resetProbability: 0.02,
    frozenInMs: 3_000,
    refusedInMs: 3_000,
    throttledInMs: 3_000,
    maxDrainInMs: 30_000,
  },
  pools: {
    sizes: [4, 16, 64],
    holdInMs: 500,
    fedPerWorkerPerSecond: 1,
    leadInMs: 1_000,
    tailInMs: 500,
    offlineInMs: 4_000,
    timeoutStartInMs: 500,
    timeoutInMs: 2_500,
    timeoutDelayInMs: 1_000,
    maxDrainInMs: 30_000,
  },
};

export const SMOKE_CALLER_SHAPES_SETTINGS: CallerShapesSettings = {
  seeds: 1,
  firstSeed: 1,
  openLoop: {
    opsPerSecond: 20,
    opsPerSecondByScenario: { frozen: 40 },
    burstEveryInMs: 200,
    leadInMs: 100,
    tailInMs: 100,
    offlineInMs: 300,
    timeoutStartInMs: 50,
    timeoutInMs: 200,
    timeoutDelayInMs: 50,
    resetProbability: 0.05,
    frozenInMs: 200,
    refusedInMs: 200,
    throttledInMs: 200,
    maxDrainInMs: 3_000,
  },
  pools: {
    sizes: [2, 4],
    holdInMs: 50,
    fedPerWorkerPerSecond: 5,
    leadInMs: 100,
    tailInMs: 100,
    offlineInMs: 300,
    timeoutStartInMs: 50,
    timeoutInMs: 200,
    timeoutDelayInMs: 50,
    maxDrainInMs: 3_000,
  },
};

/** One open-loop stream's figures in one seed. */
export interface OpenLoopSeedFigures {
  seed: number;
  operations: number;
  succeeded: number;
  /** Failed for a local reason: an open circuit, a paced partition, an empty budget, a busy caller. */
  failedLocal: number;
  failedOther: number;
  /** Requests sent (the simulator's records, plus connections refused). */
  attempts: number;
  /** Attempts that met the fault: answered 503/500 by the outage, held by the freeze, refused, throttled. */
  attemptsIntoFault: number;
  failures: Record<string, number>;
}

export interface OpenLoopRow {
  scenario: OpenLoopScenario;
  traffic: TrafficShape;
  configuration: OpenLoopConfiguration;
  declared: string;
  seeds: OpenLoopSeedFigures[];
}

/** One pool's figures in one seed. */
export interface PoolSeedFigures {
  seed: number;
  /** Messages in the queue over the run (each processed once it succeeds, or answers 409). */
  messages: number;
  /** Messages processed before the run's drain limit; `messages` when none was left. */
  processed: number;
  /** Times a message went back to the queue: refused or failed, or its partition not available when asked. */
  requeued: number;
  /** Of `requeued`, those sent back without sending anything (partitionStatus said not available). */
  requeuedBeforeSending: number;
  /** Attempts that failed for a local reason (each message sent back). */
  failedLocal: number;
  /** Healthy partitions' messages processed inside the outage window. */
  healthyDoneDuring: number;
  /** Of the no-retry client's in the same run and pool size (1 = as much). */
  healthyShareOfNoRetry: number;
  outageAttempts: number;
  /** When the last message was processed, from the start of the run. */
  lastDoneInMs: number;
  /** Failed attempts by reason (a local stop reason, or the failure); each sent its message back. */
  failures: Record<string, number>;
}

export interface PoolRow {
  workers: number;
  feed: PoolFeed;
  configuration: PoolConfiguration;
  declared: string;
  seeds: PoolSeedFigures[];
}

export interface CallerShapesResult {
  settings: CallerShapesSettings;
  /** The caller-shape mapping in force (callerInstallOptions), for the report. */
  mapping: { open: string; bounded: string; failFast: string };
  openLoop: OpenLoopRow[];
  pools: PoolRow[];
  elapsedInMs: number;
}

/** A client of one configuration, with the attempts it saw refused (no simulator record exists for those). */
interface Stream {
  client: TableClient;
  refused: { count: number };
  /** `handle.partitionStatus` of the client's table, where the package is installed: the recipe asks it before sending. */
  status?(partition: string): { available: boolean; retryAfterInMs: number };
  /** Runs one unit of a pool's work: through `handle.work` where the package is installed, so a worker busy outside the client counts. */
  work<T>(unit: () => Promise<T>): Promise<T>;
  dispose(): void;
}

/** Counts attempts that met a refused connection; runs once per attempt, after the retry policy. */
export function refusedCounter(refused: { count: number }): PipelinePolicy {
  return {
    name: "benchRefusedConnections",
    async sendRequest(request, next) {
      try {
        return await next(request);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ECONNREFUSED") refused.count += 1;
        throw error;
      }
    },
  };
}

function openStream(endpoint: string, table: string, install: InstallResilienceOptions | "sdk-default" | "no-retry"): Stream {
  const refused = { count: 0 };
  const client = tableClient(endpoint, table, install === "no-retry" ? { maxRetries: 0 } : undefined);
  client.pipeline.addPolicy(refusedCounter(refused), { afterPhase: "Retry" });
  if (typeof install === "string") return { client, refused, work: (unit) => unit(), dispose: () => undefined };
  const handle = installResilience(client, { metrics: { registry: new Registry() }, ...install });
  return { client, refused, status: (partition) => handle.partitionStatus(table, partition), work: (unit) => handle.work(unit), dispose: () => handle.dispose() };
}

function openLoopInstall(configuration: OpenLoopConfiguration): InstallResilienceOptions | "sdk-default" {
  if (configuration === "sdk-default") return "sdk-default";
  return callerInstallOptions({ open: true }).options;
}

function poolInstall(configuration: PoolConfiguration, workers: number): InstallResilienceOptions | "no-retry" {
  if (configuration === "no-retry") return "no-retry";
  return callerInstallOptions(configuration === "bounded" ? { concurrency: workers } : { failFast: true }).options;
}

/** Whether an operation failed for a local reason (it was refused before, or instead of, being sent). */
export function isLocalFailure(error: unknown): boolean {
  if (isCircuitOpenError(error) || isPartitionBusyError(error)) return true;
  const stopReason = getRetryInfo(error)?.stopReason as string | undefined;
  return stopReason !== undefined && LOCAL_STOP_REASONS.has(stopReason);
}

function describeFailure(error: unknown): string {
  const stopReason = getRetryInfo(error)?.stopReason as string | undefined;
  return isLocalFailure(error) ? `local: ${stopReason ?? failureReason(error)}` : failureReason(error);
}

const FAULT_RULE_NAMES = { outageOffline: RULES.offline, outageTimingOut: RULES.timingOut, frozen: "frozen", throttled: "throttled" } as const;

function rebalancingRules(t: { leadInMs: number; offlineInMs: number; timeoutStartInMs: number; timeoutInMs: number; timeoutDelayInMs: number }): FaultRule[] {
  return [
    { name: RULES.offline, kind: "serverBusy", match: { partition: OFFLINE_PARTITION }, startInMs: t.leadInMs, durationInMs: t.offlineInMs },
    {
      name: RULES.timingOut,
      kind: "operationTimedOut",
      match: { partition: TIMING_OUT_PARTITION },
      startInMs: t.leadInMs + t.timeoutStartInMs,
      durationInMs: t.timeoutInMs,
      delayInMs: t.timeoutDelayInMs,
    },
  ];
}

/** The scenario's faults, and how long from the start of the run until the last one ends. */
function scenarioRules(scenario: OpenLoopScenario, s: CallerShapesSettings["openLoop"]): { rules: FaultRule[]; endInMs: number } {
  const lead = s.leadInMs;
  switch (scenario) {
    case "rebalancing": {
      const outageEnd = lead + Math.max(s.offlineInMs, s.timeoutStartInMs + s.timeoutInMs);
      const rules = rebalancingRules(s);
      // Rare resets outside the outage, as in the rebalancing benchmark.
      for (const [startInMs, durationInMs] of [
        [0, lead],
        [outageEnd, Infinity],
      ] as const) {
        rules.push({ name: RULES.resetBefore, kind: "resetBeforeForward", match: { partition: /^p/ }, probability: s.resetProbability, startInMs, durationInMs });
        rules.push({
          name: RULES.resetAfter,
          kind: "resetAfterForward",
          match: { partition: /^p/, predicate: (request) => request.method !== "GET" },
          probability: s.resetProbability,
          startInMs,
          durationInMs,
        });
      }
      return { rules, endInMs: outageEnd };
    }
    case "frozen":
      return { rules: [{ name: FAULT_RULE_NAMES.frozen, kind: "freeze", startInMs: lead, durationInMs: s.frozenInMs }], endInMs: lead + s.frozenInMs };
    case "refused":
      return { rules: [{ kind: "refuseConnections", startInMs: lead, durationInMs: s.refusedInMs }], endInMs: lead + s.refusedInMs };
    case "throttled":
      return { rules: [{ name: FAULT_RULE_NAMES.throttled, kind: "serverBusy", startInMs: lead, durationInMs: s.throttledInMs }], endInMs: lead + s.throttledInMs };
  }
}

const FAULT_RULES = new Set<string>(Object.values(FAULT_RULE_NAMES));

/**
 * Faults run on their own rather than beside the others: in a freeze every held request keeps
 * its connection, so each new one opens another (about 900 a second at 150 operations/s per
 * stream); beside the other faults the event loop fell seconds behind and operations due
 * inside the freeze were sent after it.
 */
const RUN_ALONE: ReadonlySet<OpenLoopScenario> = new Set(["frozen"]);

/** Requests per table seen by the simulator: all, and those a fault rule (not a reset) answered. */
class AttemptCounts {
  readonly #counts = new Map<string, { all: number; fault: number }>();
  recording = false;

  record(table: string | undefined, ruleName: string | undefined): void {
    if (!this.recording || table === undefined) return;
    const counts = this.#counts.get(table) ?? { all: 0, fault: 0 };
    counts.all += 1;
    if (ruleName !== undefined && FAULT_RULES.has(ruleName)) counts.fault += 1;
    this.#counts.set(table, counts);
  }

  of(table: string): { all: number; fault: number } {
    return this.#counts.get(table) ?? { all: 0, fault: 0 };
  }
}

function startCountingSimulator(accountUrl: string, seed: number, counts: AttemptCounts): Promise<RebalancingSimulator> {
  return startRebalancingSimulator({
    target: new URL(accountUrl).origin,
    seed,
    service: "table",
    onRecord: (record) => counts.record(record.scope?.resource, record.ruleName),
  });
}

interface Outcome {
  op: PlannedOperation;
  endedAt: number;
  ok: boolean;
  local: boolean;
  reason?: string;
  /** A failure's HTTP status, when it had one. */
  status?: number;
  /** A failure's `getRetryInfo(error).retryAfterInMs`: when to come back. */
  retryAfterInMs?: number;
}

function settle(promise: Promise<unknown>, op: PlannedOperation, t0: number): Promise<Outcome> {
  return promise.then(
    () => ({ op, endedAt: performance.now() - t0, ok: true, local: false }),
    (error: unknown) => ({
      op,
      endedAt: performance.now() - t0,
      ok: false,
      local: isLocalFailure(error),
      reason: describeFailure(error),
      status: (error as { statusCode?: number } | undefined)?.statusCode,
      retryAfterInMs: getRetryInfo(error)?.retryAfterInMs,
    }),
  );
}

function failuresOf(done: readonly Outcome[]): Record<string, number> {
  const failures: Record<string, number> = {};
  for (const o of done) if (!o.ok) failures[o.reason ?? "error"] = (failures[o.reason ?? "error"] ?? 0) + 1;
  return failures;
}

/** What a run of side-by-side streams works with: their simulator, its attempt counts, the streams by key, the abort of stragglers. */
interface StreamRun {
  simulator: Awaited<ReturnType<typeof startCountingSimulator>>;
  counts: AttemptCounts;
  streams: ReadonlyMap<string, Stream>;
  drain: AbortController;
}

/**
 * Opens one warmed-up stream per key (on the key's table, installed as given) behind a
 * counting simulator of its own, runs `body`, and then aborts stragglers, disposes of the
 * streams and stops the simulator, whatever `body` did.
 */
async function withStreams<T>(
  accountUrl: string,
  tables: ReadonlyMap<string, string>,
  seed: number,
  installs: ReadonlyArray<readonly [string, InstallResilienceOptions | "sdk-default" | "no-retry"]>,
  body: (run: StreamRun) => Promise<T>,
): Promise<T> {
  const counts = new AttemptCounts();
  const simulator = await startCountingSimulator(accountUrl, seed, counts);
  const endpoint = `${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`;
  const drain = new AbortController();
  const streams = new Map<string, Stream>();
  try {
    for (const [key, install] of installs) {
      const stream = openStream(endpoint, tables.get(key) as string, install);
      streams.set(key, stream);
      await warmUp({ client: stream.client });
    }
    return await body({ simulator, counts, streams, drain });
  } finally {
    drain.abort();
    for (const stream of streams.values()) stream.dispose();
    await simulator.stop();
  }
}

/** Runs every configuration of the open loop, steady and bursty, side by side through one fault. */
async function openLoopRun(
  accountUrl: string,
  tables: ReadonlyMap<string, string>,
  settings: CallerShapesSettings,
  scenario: OpenLoopScenario,
  seed: number,
): Promise<Map<string, OpenLoopSeedFigures>> {
  const s = settings.openLoop;
  const installs = TRAFFIC_SHAPES.flatMap((traffic) =>
    OPEN_LOOP_CONFIGURATIONS.map((configuration) => [`${traffic}/${configuration}`, openLoopInstall(configuration)] as const),
  );
  return withStreams(accountUrl, tables, seed, installs, async ({ simulator, counts, streams, drain }) => {
    const { rules, endInMs } = scenarioRules(scenario, s);
    const rate = s.opsPerSecondByScenario[scenario] ?? s.opsPerSecond;
    const count = Math.floor(((endInMs + s.tailInMs) / 1000) * rate);
    const burst = Math.max(1, Math.round((rate * s.burstEveryInMs) / 1000));
    const startAt = (traffic: TrafficShape, i: number): number => (traffic === "steady" ? (i * 1000) / rate : Math.floor(i / burst) * s.burstEveryInMs);
    counts.recording = true;
    const t0 = performance.now();
    for (const rule of rules) simulator.addFault(rule);
    const runStream = async (key: string, traffic: TrafficShape): Promise<Outcome[]> => {
      const stream = streams.get(key) as Stream;
      // The same operations in every stream of a seed; the scenario and seed keep inserted rows apart.
      const random = workloadRandom(seed);
      const pending: Array<Promise<Outcome>> = [];
      for (let i = 0; i < count; i++) {
        const op = drawOperation(random, i, `${scenario}-s${seed}-`);
        const wait = t0 + startAt(traffic, i) - performance.now();
        if (wait > 0) await sleep(wait);
        pending.push(settle(perform({ run: (_pk, fn, signal) => fn(stream.client, signal) }, op, drain.signal), op, t0));
      }
      return Promise.all(pending);
    };
    const timer = setTimeout(() => drain.abort(), endInMs + s.tailInMs + s.maxDrainInMs);
    const keys = [...streams.keys()];
    const outcomes = await Promise.all(keys.map((key) => runStream(key, key.split("/")[0] as TrafficShape)));
    clearTimeout(timer);
    counts.recording = false;
    const figures = new Map<string, OpenLoopSeedFigures>();
    keys.forEach((key, i) => {
      const done = outcomes[i] as Outcome[];
      const attempts = counts.of(tables.get(key) as string);
      const refused = (streams.get(key) as Stream).refused.count;
      figures.set(key, {
        seed,
        operations: done.length,
        succeeded: done.filter((o) => o.ok).length,
        failedLocal: done.filter((o) => !o.ok && o.local).length,
        failedOther: done.filter((o) => !o.ok && !o.local).length,
        attempts: attempts.all + refused,
        attemptsIntoFault: scenario === "refused" ? refused : attempts.fault,
        failures: failuresOf(done),
      });
    });
    return figures;
  });
}

/** The longest an idle worker sleeps before looking at the queue again (a message sent back may be due sooner). */
const IDLE_POLL_IN_MS = 50;

/** One message of a pool's queue: its operation, and from when (run time) a worker may take it. */
interface QueuedMessage {
  op: PlannedOperation;
  visibleAt: number;
}

/** What one pool did: the messages processed (success or 409), every failed attempt, the re-queues. */
interface PoolOutcomes {
  messages: number;
  processed: Outcome[];
  failedAttempts: Outcome[];
  requeued: number;
  requeuedBeforeSending: number;
}

/** How many messages a pool gets: fed at its rate over the run, or a backlog its workers cannot clear before the outage ends. */
function poolMessages(feed: PoolFeed, workers: number, p: CallerShapesSettings["pools"]): { count: number; ratePerSecond: number } {
  const durationInMs = p.leadInMs + Math.max(p.offlineInMs, p.timeoutStartInMs + p.timeoutInMs) + p.tailInMs;
  const ratePerSecond = feed === "saturated" ? Infinity : workers * p.fedPerWorkerPerSecond;
  // Saturated: as many as the workers could take in the run if the table calls cost nothing.
  const perSecond = feed === "saturated" ? workers * (1000 / p.holdInMs) : ratePerSecond;
  return { count: Math.floor((durationInMs / 1000) * perSecond), ratePerSecond };
}

/**
 * One pool consuming its queue by the recipe: each worker takes the first visible message, asks
 * partitionStatus (where the package is installed), sends, and on a refusal or a failure other
 * than 409 puts the message back, invisible for `retryAfterInMs` (1 s without one) in whole
 * seconds; a processed message holds its worker `holdInMs` more (the rest of its work). The call
 * and the hold are one unit of work (`work`). Ends when every message is processed, or at `signal`.
 */
async function runPool(
  stream: Stream,
  workers: number,
  feed: PoolFeed,
  seed: number,
  p: CallerShapesSettings["pools"],
  t0: number,
  signal: AbortSignal,
): Promise<PoolOutcomes> {
  const random = workloadRandom(seed * 1000 + workers);
  const { count, ratePerSecond } = poolMessages(feed, workers, p);
  // Ordered by visibleAt: arrivals come in order, and a message sent back is put in its place.
  const queue: QueuedMessage[] = Array.from({ length: count }, (_, i) => ({
    op: drawOperation(random, i, `pool${workers}-${feed}-s${seed}-`),
    visibleAt: Number.isFinite(ratePerSecond) ? (i * 1000) / ratePerSecond : 0,
  }));
  const out: PoolOutcomes = { messages: count, processed: [], failedAttempts: [], requeued: 0, requeuedBeforeSending: 0 };
  const sendBack = (op: PlannedOperation, retryAfterInMs: number): void => {
    const visibleAt = performance.now() - t0 + Math.max(1, Math.ceil(retryAfterInMs / 1000)) * 1000;
    let at = queue.length;
    while (at > 0 && (queue[at - 1] as QueuedMessage).visibleAt > visibleAt) at -= 1;
    queue.splice(at, 0, { op, visibleAt });
    out.requeued += 1;
  };
  const worker = async (): Promise<void> => {
    while (!signal.aborted && out.processed.length < count) {
      const head = queue[0];
      const wait = head === undefined ? IDLE_POLL_IN_MS : head.visibleAt - (performance.now() - t0);
      if (wait > 0) {
        await sleep(Math.min(wait, IDLE_POLL_IN_MS));
        continue;
      }
      const { op } = queue.shift() as QueuedMessage;
      // Ask before sending: a partition that takes nothing now costs no worker time.
      const status = stream.status?.(op.partition);
      if (status !== undefined && !status.available) {
        out.requeuedBeforeSending += 1;
        sendBack(op, status.retryAfterInMs);
        continue;
      }
      await stream.work(async () => {
        const outcome = await settle(perform({ run: (_pk, fn, s) => fn(stream.client, s) }, op, signal), op, t0);
        // 409: an insert made before (a message seen twice): processed.
        if (outcome.ok || outcome.status === 409) {
          out.processed.push(outcome);
          if (!signal.aborted) await sleep(p.holdInMs);
          return;
        }
        out.failedAttempts.push(outcome);
        if (!signal.aborted) sendBack(op, outcome.retryAfterInMs ?? 1000);
      });
    }
  };
  await Promise.all(Array.from({ length: workers }, () => worker()));
  return out;
}

/** Runs every pool size and configuration side by side, fed one way, through one outage. */
async function poolRun(
  accountUrl: string,
  tables: ReadonlyMap<string, string>,
  settings: CallerShapesSettings,
  feed: PoolFeed,
  seed: number,
): Promise<Map<string, PoolSeedFigures>> {
  const p = settings.pools;
  const installs = p.sizes.flatMap((workers) =>
    POOL_CONFIGURATIONS.map((configuration) => [`${workers}/${configuration}`, poolInstall(configuration, workers)] as const),
  );
  return withStreams(accountUrl, tables, seed, installs, async ({ simulator, counts, streams, drain }) => {
    counts.recording = true;
    const t0 = performance.now();
    for (const rule of rebalancingRules(p)) simulator.addFault(rule);
    const outageStart = p.leadInMs;
    const outageEnd = p.leadInMs + Math.max(p.offlineInMs, p.timeoutStartInMs + p.timeoutInMs);
    const durationInMs = outageEnd + p.tailInMs;
    const timer = setTimeout(() => drain.abort(), durationInMs + p.maxDrainInMs);
    const keys = [...streams.keys()];
    const outcomes = await Promise.all(
      keys.map((key) => runPool(streams.get(key) as Stream, Number(key.split("/")[0]), feed, seed, p, t0, drain.signal)),
    );
    clearTimeout(timer);
    counts.recording = false;
    const healthyDone = (done: PoolOutcomes) =>
      done.processed.filter((o) => !OUTAGE_PARTITIONS.includes(o.op.partition) && o.endedAt >= outageStart && o.endedAt < outageEnd).length;
    const figures = new Map<string, PoolSeedFigures>();
    keys.forEach((key, i) => {
      const done = outcomes[i] as PoolOutcomes;
      const baseline = outcomes[keys.indexOf(`${key.split("/")[0]}/no-retry`)] as PoolOutcomes;
      figures.set(key, {
        seed,
        messages: done.messages,
        processed: done.processed.length,
        requeued: done.requeued,
        requeuedBeforeSending: done.requeuedBeforeSending,
        failedLocal: done.failedAttempts.filter((o) => o.local).length,
        healthyDoneDuring: healthyDone(done),
        healthyShareOfNoRetry: Math.round((healthyDone(done) / Math.max(1, healthyDone(baseline))) * 1000) / 1000,
        outageAttempts: counts.of(tables.get(key) as string).fault,
        lastDoneInMs: Math.round(Math.max(0, ...done.processed.map((o) => o.endedAt))),
        failures: failuresOf(done.failedAttempts),
      });
    });
    return figures;
  });
}

/** Runs the benchmark against Azurite's Tables endpoint `accountUrl`. */
export async function runCallerShapes(accountUrl: string, settings: CallerShapesSettings, log: (line: string) => void = () => undefined): Promise<CallerShapesResult> {
  const started = performance.now();
  const openTables = new Map<OpenLoopScenario, Map<string, string>>();
  const poolTables = new Map<string, string>();
  const created: TableClient[] = [];
  for (const scenario of OPEN_LOOP_SCENARIOS) {
    const tables = new Map<string, string>();
    for (const traffic of TRAFFIC_SHAPES) {
      for (const configuration of OPEN_LOOP_CONFIGURATIONS) {
        const table = benchTableName("cs", `${scenario}${traffic}${configuration}`);
        created.push(await createSeededTable(accountUrl, table));
        tables.set(`${traffic}/${configuration}`, table);
      }
    }
    openTables.set(scenario, tables);
  }
  for (const workers of settings.pools.sizes) {
    for (const configuration of POOL_CONFIGURATIONS) {
      const table = benchTableName("cs", `pool${workers}${configuration}`);
      created.push(await createSeededTable(accountUrl, table));
      poolTables.set(`${workers}/${configuration}`, table);
    }
  }
  const openLoop: OpenLoopRow[] = [];
  for (const scenario of OPEN_LOOP_SCENARIOS) {
    for (const traffic of TRAFFIC_SHAPES) {
      for (const configuration of OPEN_LOOP_CONFIGURATIONS) {
        const declared = configuration === "defaults" ? callerInstallOptions({ open: true }).declared : "SDK default retry";
        openLoop.push({ scenario, traffic, configuration, declared, seeds: [] });
      }
    }
  }
  const pools: PoolRow[] = [];
  for (const workers of settings.pools.sizes) {
    for (const feed of POOL_FEEDS) {
      for (const configuration of POOL_CONFIGURATIONS) {
        const declared =
          configuration === "no-retry" ? "SDK client, retries off" : callerInstallOptions(configuration === "bounded" ? { concurrency: workers } : { failFast: true }).declared;
        pools.push({ workers, feed, configuration, declared, seeds: [] });
      }
    }
  }
  try {
    for (let seed = settings.firstSeed; seed < settings.firstSeed + settings.seeds; seed++) {
      const run = (scenario: OpenLoopScenario) => openLoopRun(accountUrl, openTables.get(scenario) as Map<string, string>, settings, scenario, seed);
      const together = OPEN_LOOP_SCENARIOS.filter((scenario) => !RUN_ALONE.has(scenario));
      const byScenario = new Map<OpenLoopScenario, Map<string, OpenLoopSeedFigures>>();
      const results = await Promise.all(together.map(run));
      together.forEach((scenario, i) => byScenario.set(scenario, results[i] as Map<string, OpenLoopSeedFigures>));
      for (const scenario of RUN_ALONE) byScenario.set(scenario, await run(scenario));
      for (const scenario of OPEN_LOOP_SCENARIOS) {
        const figures = byScenario.get(scenario) as Map<string, OpenLoopSeedFigures>;
        for (const row of openLoop.filter((r) => r.scenario === scenario)) row.seeds.push(figures.get(`${row.traffic}/${row.configuration}`) as OpenLoopSeedFigures);
        const line = [...figures.entries()].map(([key, f]) => `${key} ${f.succeeded}/${f.operations} (local ${f.failedLocal}, into fault ${f.attemptsIntoFault})`).join("; ");
        log(`caller shapes, seed ${seed}, open loop ${scenario}: ${line}`);
      }
      for (const feed of POOL_FEEDS) {
        const figures = await poolRun(accountUrl, poolTables, settings, feed, seed);
        for (const row of pools.filter((r) => r.feed === feed)) row.seeds.push(figures.get(`${row.workers}/${row.configuration}`) as PoolSeedFigures);
        const line = [...figures.entries()]
          .map(([key, f]) => `${key} ${f.processed}/${f.messages} (re-queued ${f.requeued}, last ${(f.lastDoneInMs / 1000).toFixed(1)} s), healthy ${f.healthyDoneDuring} (${Math.round(f.healthyShareOfNoRetry * 100)} %)`)
          .join("; ");
        log(`caller shapes, seed ${seed}, pools ${feed}: ${line}`);
      }
    }
  } finally {
    for (const direct of created) await direct.deleteTable().catch(() => undefined);
  }
  return {
    settings,
    mapping: {
      open: callerInstallOptions({ open: true }).declared,
      bounded: callerInstallOptions({ concurrency: 16 }).declared,
      failFast: callerInstallOptions({ failFast: true }).declared,
    },
    openLoop,
    pools,
    elapsedInMs: Math.round(performance.now() - started),
  };
}
