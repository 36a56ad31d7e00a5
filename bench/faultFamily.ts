// Benchmark: a family of faults drawn at random for each seed (issue 36), not four fixed shapes.
// The set-up is comeBack's (bench/comeBack.ts): a real TableClient → the package's HTTP fault
// proxy (startRebalancingSimulator) → real Azurite, an open loop of 200 operations/s for 6 s over
// 10 partitions, half inserts (unique row keys), half upserts, with the same rare connection
// resets; the package's defaults, the SDK's default retry and no retry run one after another,
// each on a fresh table behind a fresh proxy. What differs is the faults: each seed draws one to
// three from the family in bench/familyDraw.ts (throttled accounts, partitions out, an endpoint
// frozen, refusing or resetting, at random times that may overlap), and in half the seeds a
// trickle of other requests on the same client keeps getting non-throttle answers (2xx, 403,
// 404, 409, 501) throughout. After each run the store is read directly (not through the proxy):
// every write acknowledged as a success must be there with its payload.
import { loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { installResilience, type ResilienceHandle } from "../src/index.js";
import { DEVSTORE_ACCOUNT_NAME, startRebalancingSimulator, type FaultRule, type RebalancingSimulator, type RequestRecord } from "azure-storage-resilience/testing";
import { mulberry32 } from "../tools/load/mulberry32.js";
import { percentile, round } from "../tools/report/stats.js";
import {
  COMEBACK_CONFIGURATIONS,
  describeFailure,
  FULL_COMEBACK_SETTINGS,
  isLocalComeBackFailure,
  plan,
  SMOKE_COMEBACK_SETTINGS,
  type ComeBackConfiguration,
  type ComeBackSettings,
  type Outcome,
  type PlannedOperation,
} from "./comeBack.js";
import {
  attemptsBound,
  describeFault,
  drawFamily,
  familyRules,
  FULL_FAMILY_TIMING,
  pastTheEnd,
  workloadPartition,
  type FamilyDraw,
  type FamilyTiming,
} from "./familyDraw.js";
import { familySummary, familyWorstCases, worstLatencySeed, type FamilyChart, type FamilyFaultFigures, type FamilyResult, type FamilyRun } from "./familyFigures.js";
import { machineInfo } from "./machine.js";
import { tableClient } from "./tableConfigurations.js";
import { benchTableName, failureReason } from "./workload.js";
import { withTableAzurite } from "./withTableAzurite.js";

/** The configurations: the package's defaults (`installResilience(client)`), the SDK's default retry, no retry. */
export const FAMILY_CONFIGURATIONS = COMEBACK_CONFIGURATIONS;
export type FamilyConfiguration = ComeBackConfiguration;

/** What the trickle asks, and the answer it gets throughout the run, each on a partition of its own. */
export const TRICKLE_ANSWERS = ["200", "403", "404", "409", "501"] as const;
export type TrickleAnswer = (typeof TRICKLE_ANSWERS)[number];
/** Set on the trickle's requests, so that the client can tell its refused connections from the workload's. */
const TRICKLE_HEADER = "x-bench-trickle";
const trickleRules: FaultRule[] = [
  { name: "trickle-403", kind: "status", status: 403, errorCode: "AuthorizationPermissionMismatch", match: { partition: "t403" } },
  { name: "trickle-501", kind: "status", status: 501, errorCode: "NotImplemented", match: { partition: "t501" } },
];
/** The workload's background resets, as comeBack's (after the faults: the first matching rule answers). */
const backgroundResets = (w: ComeBackSettings["workload"]): FaultRule[] => [
  { name: "reset-before", kind: "resetBeforeForward", match: { partition: /^p\d+$/ }, probability: w.resetBeforeProbability },
  { name: "reset-after", kind: "resetAfterForward", match: { partition: /^p\d+$/ }, probability: w.resetAfterProbability },
];

export interface FamilySettings {
  /** Seeds run, from `firstSeed` on. A seed draws the faults, the arrivals (comeBack's, for the same seed) and the trickle. */
  seeds: number;
  firstSeed: number;
  configurations: readonly FamilyConfiguration[];
  /** Keep every operation's record in the results. */
  keepRecords: boolean;
  /** comeBack's workload: arrivals per second, duration, partitions, payload, background resets, drain. */
  workload: ComeBackSettings["workload"];
  /** When faults start and how long they last. */
  timing: FamilyTiming;
  /** Trickle requests per second, in the seeds that have one (about 1 % of the workload). */
  trickle: { perSecond: number };
  /** Width of the charts' arrival-time bins. */
  chartBinInMs: number;
}

export const FULL_FAMILY_SETTINGS: FamilySettings = {
  seeds: 20,
  firstSeed: 1,
  configurations: FAMILY_CONFIGURATIONS,
  keepRecords: false,
  workload: FULL_COMEBACK_SETTINGS.workload,
  timing: FULL_FAMILY_TIMING,
  trickle: { perSecond: 2 },
  chartBinInMs: 100,
};

/** Tiny: figures mean nothing. Seed 3 draws three overlapping faults (the account served up to a rate, a refusal, every request throttled) and the trickle. */
export const SMOKE_FAMILY_SETTINGS: FamilySettings = {
  ...FULL_FAMILY_SETTINGS,
  seeds: 1,
  firstSeed: 3,
  workload: SMOKE_COMEBACK_SETTINGS.workload,
  timing: { lengthInMs: { min: 250, max: 500 }, earliestStartInMs: 100, latestEndInMs: 800, timeoutDelayInMs: { min: 50, max: 150 } },
  trickle: { perSecond: 10 },
};

// ---------------------------------------------------------------------------------------------
// The trickle

interface TrickleOperation {
  index: number;
  atInMs: number;
  answer: TrickleAnswer;
}

/** The seed's trickle: evenly spread arrivals, each jittered in its slot, the answers taken in turn from a drawn offset. */
function tricklePlan(s: FamilySettings, seed: number): TrickleOperation[] {
  const random = mulberry32(seed * 15_485_863 + 36);
  const spacing = 1000 / s.trickle.perSecond;
  const count = Math.floor((s.workload.durationInMs / 1000) * s.trickle.perSecond);
  const offset = Math.floor(random() * TRICKLE_ANSWERS.length);
  return Array.from({ length: count }, (_, index) => ({
    index,
    atInMs: (index + random()) * spacing,
    answer: TRICKLE_ANSWERS[(index + offset) % TRICKLE_ANSWERS.length] as TrickleAnswer,
  }));
}

/** Entities the trickle's 2xx read and 409 insert find, written directly. */
async function seedTrickle(direct: TableClient): Promise<void> {
  for (const partitionKey of ["t200", "t409"]) await direct.createEntity({ partitionKey, rowKey: "exists" });
}

function performTrickle(client: TableClient, op: TrickleOperation, signal: AbortSignal): Promise<unknown> {
  const options = { abortSignal: signal, requestOptions: { customHeaders: { [TRICKLE_HEADER]: "1" } } };
  switch (op.answer) {
    case "200":
      return client.getEntity("t200", "exists", options);
    case "403":
      // A SAS that lacks the write permission: answered by the proxy, never stored.
      return client.upsertEntity({ partitionKey: "t403", rowKey: `r${op.index}` }, "Replace", options);
    case "404":
      return client.getEntity("t404", `missing${op.index}`, options);
    case "409":
      return client.createEntity({ partitionKey: "t409", rowKey: "exists" }, options);
    case "501":
      return client.getEntity("t501", `r${op.index}`, options);
  }
}

// ---------------------------------------------------------------------------------------------
// One configuration through one seed's faults

/** What the proxy and the client saw while recording. */
class Attempts {
  recording = false;
  t0Epoch = 0;
  t0 = 0;
  workload = 0;
  trickle = 0;
  byRule: Record<string, number> = {};
  refused = 0;
  trickleRefused = 0;
  /** Attempts into the faults by arrival bin (the proxy's read time; a refusal's time at the client). */
  readonly intoFaults: number[];

  constructor(readonly binInMs: number, bins: number) {
    this.intoFaults = new Array<number>(bins).fill(0);
  }

  onRecord = (record: RequestRecord): void => {
    if (!this.recording || record.time < this.t0Epoch) return;
    if (record.scope?.partition?.startsWith("t") === true) {
      this.trickle += 1;
      return;
    }
    this.workload += 1;
    const rule = record.ruleName;
    if (rule === undefined) return;
    this.byRule[rule] = (this.byRule[rule] ?? 0) + 1;
    if (/^f\d+$/.test(rule)) this.#bin(record.time - this.t0Epoch);
  };

  onRefused = (trickle: boolean): void => {
    if (!this.recording) return;
    if (trickle) {
      this.trickleRefused += 1;
      return;
    }
    this.refused += 1;
    this.#bin(performance.now() - this.t0);
  };

  #bin(atInMs: number): void {
    const i = Math.min(this.intoFaults.length - 1, Math.max(0, Math.floor(atInMs / this.binInMs)));
    this.intoFaults[i] = (this.intoFaults[i] ?? 0) + 1;
  }
}

/** Counts each attempt refused a connection; the trickle's apart (they carry its header). */
function refusalRecorder(onRefused: (trickle: boolean) => void): PipelinePolicy {
  return {
    name: "benchFamilyRefusals",
    async sendRequest(request, next) {
      try {
        return await next(request);
      } catch (error) {
        if ((error as { code?: unknown }).code === "ECONNREFUSED") onRefused(request.headers.has(TRICKLE_HEADER));
        throw error;
      }
    },
  };
}

/** The payload of an operation's entity: its index first, so the store check knows it is this write's. */
function payloadOf(op: PlannedOperation, bytes: number): string {
  const head = `${op.index}:`;
  return head + "x".repeat(Math.max(0, bytes - head.length));
}

function perform(client: TableClient, op: PlannedOperation, bytes: number, signal: AbortSignal): Promise<unknown> {
  const entity = { partitionKey: workloadPartition(op.partition), rowKey: `r${op.index}`, payload: payloadOf(op, bytes) };
  return op.kind === "insert" ? client.createEntity(entity, { abortSignal: signal }) : client.upsertEntity(entity, "Replace", { abortSignal: signal });
}

function settle(promise: Promise<unknown>, op: PlannedOperation, t0: number): Promise<Outcome> {
  return promise.then(
    () => ({ op, endInMs: performance.now() - t0, ok: true, local: false }),
    (error: unknown) => ({ op, endInMs: performance.now() - t0, ok: false, local: isLocalComeBackFailure(error), reason: describeFailure(error) }),
  );
}

/** Every workload entity's payload, read from Azurite directly (not through the proxy). */
async function storedPayloads(direct: TableClient): Promise<Map<string, unknown>> {
  const stored = new Map<string, unknown>();
  for await (const entity of direct.listEntities<{ payload?: unknown }>({ queryOptions: { select: ["PartitionKey", "RowKey", "payload"] } })) {
    if (/^p\d+$/.test(entity.partitionKey ?? "")) stored.set(`${entity.partitionKey}|${entity.rowKey}`, entity.payload);
  }
  return stored;
}

interface RunDone {
  run: FamilyRun;
  series: FamilyChart["series"][number];
}

/** One configuration through the seed's faults, on a table and a proxy of its own. */
async function configurationRun(accountUrl: string, s: FamilySettings, draw: FamilyDraw, configuration: FamilyConfiguration): Promise<RunDone> {
  const started = performance.now();
  const loadAverage = round(loadavg()[0] ?? 0, 2);
  const w = s.workload;
  const table = benchTableName("fam", `${configuration}s${draw.seed}`);
  const direct = tableClient(accountUrl, table);
  await direct.createTable();
  let simulator: RebalancingSimulator | undefined;
  let handle: ResilienceHandle | undefined;
  try {
    if (draw.trickle) await seedTrickle(direct);
    const attempts = new Attempts(s.chartBinInMs, Math.ceil(w.durationInMs / s.chartBinInMs));
    simulator = await startRebalancingSimulator({ target: new URL(accountUrl).origin, seed: draw.seed, service: "table", onRecord: attempts.onRecord });
    const client = tableClient(`${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, table, configuration === "no-retry" ? { maxRetries: 0 } : undefined);
    client.pipeline.addPolicy(refusalRecorder(attempts.onRefused), { afterPhase: "Retry" });
    if (configuration === "package") handle = installResilience(client, { metrics: { registry: new Registry() } });
    // Opens connections and settles the JIT before the clock starts, on a partition no rule matches.
    for (let i = 0; i < 5; i++) await client.upsertEntity({ partitionKey: "warm", rowKey: `w${i}` }).catch(() => undefined);

    const ops = plan(w, draw.seed);
    const trickle = draw.trickle ? tricklePlan(s, draw.seed) : [];
    const events = [...ops.map((op) => ({ atInMs: op.atInMs, op })), ...trickle.map((t) => ({ atInMs: t.atInMs, trickle: t }))].sort((a, b) => a.atInMs - b.atInMs);
    const drain = new AbortController();
    const pending: Array<Promise<Outcome>> = [];
    const tricklePending: Array<Promise<{ op: TrickleOperation; answer: string }>> = [];
    attempts.recording = true;
    const t0 = performance.now();
    attempts.t0 = t0;
    attempts.t0Epoch = Date.now();
    for (const rule of [...trickleRules, ...familyRules(draw), ...backgroundResets(w)]) simulator.addFault(rule);
    let maxStartLagInMs = 0;
    for (const event of events) {
      const wait = t0 + event.atInMs - performance.now();
      if (wait > 0) await sleep(wait);
      maxStartLagInMs = Math.max(maxStartLagInMs, performance.now() - t0 - event.atInMs);
      if ("op" in event && event.op !== undefined) pending.push(settle(perform(client, event.op, w.payloadBytes, drain.signal), event.op, t0));
      else if ("trickle" in event && event.trickle !== undefined) {
        const op = event.trickle;
        tricklePending.push(performTrickle(client, op, drain.signal).then(() => ({ op, answer: "200" }), (error: unknown) => ({ op, answer: failureReason(error) })));
      }
    }
    const timer = setTimeout(() => drain.abort(), w.maxDrainInMs);
    const outcomes = await Promise.all(pending);
    const trickleOutcomes = await Promise.all(tricklePending);
    clearTimeout(timer);
    const aborted = drain.signal.aborted;
    drain.abort();
    attempts.recording = false;
    const stored = await storedPayloads(direct);
    const run = summarize(s, draw, configuration, outcomes, attempts, stored);
    run.maxStartLagInMs = Math.round(maxStartLagInMs);
    run.loadAverage = loadAverage;
    run.abandoned = aborted ? outcomes.filter((o) => !o.ok && o.reason === "AbortError").length : 0;
    if (draw.trickle) {
      const answers: Record<string, number> = {};
      for (const t of trickleOutcomes) answers[t.answer] = (answers[t.answer] ?? 0) + 1;
      const asIntended = trickleOutcomes.filter((t) => t.answer === t.op.answer).length;
      run.trickle = { operations: trickleOutcomes.length, answers, asIntended, attempts: attempts.trickle + attempts.trickleRefused, refused: attempts.trickleRefused };
    }
    run.elapsedInMs = Math.round(performance.now() - started);
    return { run, series: seriesOf(s, configuration, outcomes, attempts) };
  } finally {
    handle?.dispose();
    await simulator?.stop();
    await direct.deleteTable().catch(() => undefined);
  }
}

const ms = (value: number | undefined): number | null => (value === undefined ? null : Math.round(value));
const max = (values: readonly number[]): number | undefined => (values.length === 0 ? undefined : Math.max(...values));

/** The run's figures from its outcomes, the attempts recorded and the store's contents. */
function summarize(s: FamilySettings, draw: FamilyDraw, configuration: FamilyConfiguration, done: readonly Outcome[], attempts: Attempts, stored: Map<string, unknown>): FamilyRun {
  const w = s.workload;
  const perFault = new Map<string, { pastEnd: number[]; succeeded: number }>(draw.faults.map((f) => [f.id, { pastEnd: [], succeeded: 0 }]));
  const pastEnd: number[] = [];
  for (const o of done) {
    const past = pastTheEnd(draw.faults, w.partitions, workloadPartition(o.op.partition), o.op.atInMs, o.endInMs);
    if (past === undefined) continue;
    pastEnd.push(past.pastInMs);
    for (const id of past.arrivedIn) {
      const figures = perFault.get(id)!;
      figures.pastEnd.push(past.pastInMs);
      if (o.ok) figures.succeeded += 1;
    }
  }
  const lastEnd = Math.max(...draw.faults.map((f) => f.endInMs));
  const after = done.filter((o) => o.op.atInMs >= lastEnd);
  const afterLatency = after.map((o) => o.endInMs - o.op.atInMs);
  let lostWrites = 0;
  let failedButStored = 0;
  for (const o of done) {
    const value = stored.get(`${workloadPartition(o.op.partition)}|r${o.op.index}`);
    const intact = value === payloadOf(o.op, w.payloadBytes);
    if (o.ok && !intact) lostWrites += 1;
    if (!o.ok && value !== undefined) failedButStored += 1;
  }
  const failures: Record<string, number> = {};
  for (const o of done) if (!o.ok) failures[o.reason ?? "error"] = (failures[o.reason ?? "error"] ?? 0) + 1;
  const faults: FamilyFaultFigures[] = draw.faults.map((fault) => {
    const figures = perFault.get(fault.id)!;
    // Refused connections never reach the proxy: the client counts them. A seed has at most one refusal (familyDraw.ts).
    const into = fault.shape === "refused" ? attempts.refused : (attempts.byRule[fault.id] ?? 0);
    return {
      id: fault.id,
      shape: fault.shape,
      attempts: into,
      bound: attemptsBound(fault, w.opsPerSecond, w.partitions) ?? null,
      inFault: figures.pastEnd.length,
      inFaultSucceeded: figures.succeeded,
      pastEndP99InMs: ms(percentile(figures.pastEnd, 99)),
    };
  });
  const byRule = { ...attempts.byRule };
  const refusal = draw.faults.find((f) => f.shape === "refused");
  if (refusal !== undefined) byRule[refusal.id] = attempts.refused;
  const run: FamilyRun = {
    seed: draw.seed,
    configuration,
    operations: done.length,
    succeeded: done.filter((o) => o.ok).length,
    failedLocal: done.filter((o) => !o.ok && o.local).length,
    failedOther: done.filter((o) => !o.ok && !o.local).length,
    failures,
    faults,
    inFault: pastEnd.length,
    pastEndP50InMs: ms(percentile(pastEnd, 50)),
    pastEndP99InMs: ms(percentile(pastEnd, 99)),
    pastEndMaxInMs: ms(max(pastEnd)),
    arrivedAfter: after.length,
    arrivedAfterSucceeded: after.filter((o) => o.ok).length,
    arrivedAfterP50InMs: ms(percentile(afterLatency, 50)),
    arrivedAfterP99InMs: ms(percentile(afterLatency, 99)),
    arrivedAfterMaxInMs: ms(max(afterLatency)),
    attempts: attempts.workload + attempts.refused,
    attemptsByRule: byRule,
    lostWrites,
    failedButStored,
    maxStartLagInMs: 0,
    loadAverage: 0,
    abandoned: 0,
    elapsedInMs: 0,
  };
  if (s.keepRecords) run.records = done.map((o) => [round(o.op.atInMs, 1), round(o.endInMs, 1), o.ok ? 1 : o.local ? -1 : 0, o.op.partition]);
  return run;
}

/** By arrival bin: the median and largest latency of the operations arriving in it, and the attempts into the faults. */
function seriesOf(s: FamilySettings, configuration: FamilyConfiguration, done: readonly Outcome[], attempts: Attempts): RunDone["series"] {
  const bins = Math.ceil(s.workload.durationInMs / s.chartBinInMs);
  const latencies: number[][] = Array.from({ length: bins }, () => []);
  for (const o of done) latencies[Math.min(bins - 1, Math.floor(o.op.atInMs / s.chartBinInMs))]!.push(o.endInMs - o.op.atInMs);
  return {
    configuration,
    p50InMs: latencies.map((values) => Math.round(percentile(values, 50) ?? 0)),
    maxInMs: latencies.map((values) => Math.round(max(values) ?? 0)),
    intoFaults: [...attempts.intoFaults],
  };
}

// ---------------------------------------------------------------------------------------------
// The whole benchmark

/** Runs the benchmark against Azurite's Tables endpoint `accountUrl`; `log` gets a line per run and the summary tables. */
export async function runFaultFamily(accountUrl: string, s: FamilySettings, log: (line: string) => void = () => undefined): Promise<FamilyResult> {
  const started = performance.now();
  const { commit, uncommittedSourceFiles } = machineInfo();
  const result: FamilyResult = {
    settings: s,
    startedAt: new Date().toISOString(),
    source: { commit, uncommittedSourceFiles },
    draws: [],
    runs: [],
    charts: [],
    loadAverage: { start: round(loadavg()[0] ?? 0, 2), end: 0 },
    elapsedInMs: 0,
  };
  const series = new Map<number, RunDone["series"][]>();
  for (let seed = s.firstSeed; seed < s.firstSeed + s.seeds; seed++) {
    const draw = drawFamily(seed, s.workload.partitions, s.timing);
    result.draws.push(draw);
    log(`family seed ${seed}: ${draw.faults.map(describeFault).join("; ")}${draw.trickle ? "; trickle" : ""}`);
    const seedSeries: RunDone["series"][] = [];
    for (const configuration of s.configurations) {
      const { run, series: runSeries } = await configurationRun(accountUrl, s, draw, configuration);
      result.runs.push(run);
      seedSeries.push(runSeries);
      log(runLine(run));
    }
    series.set(seed, seedSeries);
  }
  // Charts: the package's worst case for latency, and for attempts when another seed is.
  const chartOf = (kind: FamilyChart["kind"], seed: number, worstOf: string): FamilyChart => ({
    kind,
    seed,
    worstOf,
    binInMs: s.chartBinInMs,
    faults: result.draws.find((d) => d.seed === seed)?.faults ?? [],
    series: (series.get(seed) ?? []).filter((x) => x.configuration !== "no-retry"),
  });
  const latency = worstLatencySeed(result.runs);
  if (latency !== undefined) result.charts.push(chartOf("latency", latency.seed, latency.worstOf));
  const attempts = familyWorstCases(result).filter((w) => w.target.startsWith("attempts")).sort((a, b) => b.ratio - a.ratio)[0];
  if (attempts !== undefined && attempts.seed !== latency?.seed) result.charts.push(chartOf("attempts", attempts.seed, `${attempts.target.replace(" <= its bound", "")} (${attempts.worst})`));
  result.loadAverage.end = round(loadavg()[0] ?? 0, 2);
  result.elapsedInMs = Math.round(performance.now() - started);
  for (const line of familySummary(result)) log(line);
  return result;
}

function runLine(r: FamilyRun): string {
  const faults = r.faults.map((f) => `${f.id} ${f.attempts}${f.bound === null ? "" : `/${f.bound}`}`).join(", ");
  return (
    `family seed ${r.seed}, ${r.configuration}: ${r.succeeded}/${r.operations} (local ${r.failedLocal}, lost ${r.lostWrites}), ` +
    `past end p99 ${r.pastEndP99InMs} ms, arrived after p99 ${r.arrivedAfterP99InMs} ms, into faults ${faults}, lag ${r.maxStartLagInMs} ms, load ${r.loadAverage}, ${(r.elapsedInMs / 1000).toFixed(1)} s`
  );
}

/** What a scratch script or the command line may change of the full settings. */
export interface FamilyOverrides {
  seeds?: number;
  firstSeed?: number;
  configurations?: readonly FamilyConfiguration[];
  keepRecords?: boolean;
}

/** `base` with the overrides applied, each checked. */
export function familySettings(base: FamilySettings, overrides: FamilyOverrides = {}): FamilySettings {
  const positive = (name: string, value: number | undefined): number | undefined => {
    if (value !== undefined && !(Number.isInteger(value) && value >= 1)) throw new RangeError(`${name} must be an integer >= 1; got ${String(value)}.`);
    return value;
  };
  const configurations = overrides.configurations;
  if (configurations !== undefined) {
    for (const c of configurations) if (!FAMILY_CONFIGURATIONS.includes(c)) throw new RangeError(`configs takes ${FAMILY_CONFIGURATIONS.join(", ")}; got ${JSON.stringify(c)}.`);
  }
  return {
    ...base,
    seeds: positive("seeds", overrides.seeds) ?? base.seeds,
    firstSeed: positive("firstSeed", overrides.firstSeed) ?? base.firstSeed,
    configurations: configurations ?? base.configurations,
    keepRecords: overrides.keepRecords ?? base.keepRecords,
  };
}

/**
 * For a scratch script: starts Azurite, runs the benchmark with the full settings and
 * `overrides` (per-operation records kept unless `keepRecords: false`), stops Azurite.
 *
 *   const result = await measureFaultFamily({ seeds: 1, firstSeed: 7 });
 */
export async function measureFaultFamily(overrides: FamilyOverrides = {}, log: (line: string) => void = (line) => console.error(line)): Promise<FamilyResult> {
  return withTableAzurite((tableUrl) => runFaultFamily(tableUrl, familySettings(FULL_FAMILY_SETTINGS, { keepRecords: true, ...overrides }), log));
}
