// Benchmark 7: pacing that follows what the service serves (issue 22), three scenarios, each
// over several seeds (a seed jitters the open-loop schedule and shuffles partitions and clients):
//   account   every partition of the account answers 503 ServerBusy for a few seconds (a real
//             TableClient, Azurite, the simulator): p99 against the SDK default's and the throttle's end;
//   splits    each of many partitions answers 503 once and then serves (a table being split),
//             stub transport, a fixed number in flight: time with pacing against pacing off;
//   clients   one hot partition at twice its capacity, one client and N independent clients
//             (each its own install, as N app instances): done within the time capacity needs.
import { setTimeout as sleep } from "node:timers/promises";
import { createEmptyPipeline, createHttpHeaders, createPipelineRequest, type HttpClient, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { Registry } from "prom-client";
import { installResilience } from "../src/index.js";
import { DEVSTORE_ACCOUNT_NAME, startRebalancingSimulator, type RebalancingSimulator } from "azure-storage-resilience/testing";
import { mulberry32 } from "../tools/load/mulberry32.js";
import { percentile, round } from "../tools/report/stats.js";
import { tableClient } from "./tableConfigurations.js";
import { benchTableName } from "./workload.js";

export interface PacingSettings {
  seeds: number;
  account: { opsPerSecond: number; durationInMs: number; partitions: number; throttleStartInMs: number; throttleDurationInMs: number; maxDrainInMs: number };
  splits: { partitions: number; inFlight: number };
  clients: { counts: number[]; opsPerSecond: number; durationInMs: number; capacityPerSecond: number; maxDrainInMs: number };
}

export const FULL_PACING_SETTINGS: PacingSettings = {
  seeds: 5,
  account: { opsPerSecond: 200, durationInMs: 6_000, partitions: 10, throttleStartInMs: 1_500, throttleDurationInMs: 3_000, maxDrainInMs: 60_000 },
  splits: { partitions: 100_000, inFlight: 500 },
  clients: { counts: [1, 8], opsPerSecond: 200, durationInMs: 6_000, capacityPerSecond: 50, maxDrainInMs: 60_000 },
};

export const SMOKE_PACING_SETTINGS: PacingSettings = {
  seeds: 1,
  account: { opsPerSecond: 40, durationInMs: 1_500, partitions: 5, throttleStartInMs: 300, throttleDurationInMs: 600, maxDrainInMs: 10_000 },
  splits: { partitions: 2_000, inFlight: 50 },
  clients: { counts: [1, 2], opsPerSecond: 40, durationInMs: 1_000, capacityPerSecond: 5, maxDrainInMs: 10_000 },
};

export interface AccountThrottleRun {
  id: "sdk-default" | "package";
  seed: number;
  operations: number;
  succeeded: number;
  p99InMs: number;
  /** p99 minus the throttle's duration: how far past the physical limit (an operation arriving as it starts ends as it ends). */
  p99PastLimitInMs: number;
  /** When the last operation ended, after the throttle's end. */
  lastDoneAfterEndInMs: number;
  /** Attempts the simulator answered throttled (attempts into the throttled account). */
  throttledAttempts: number;
}

export interface SplitsRun {
  id: "pacing-off" | "package";
  seed: number;
  operations: number;
  succeeded: number;
  elapsedInMs: number;
  /** Whether the account pacer was engaged at any sample. */
  accountPaced: boolean;
}

export interface ClientsRun {
  clients: number;
  seed: number;
  hotOperations: number;
  hotSucceeded: number;
  /** Hot operations done within 1.1x and 1.5x of the time the capacity needs (hotOperations / capacity). */
  doneWithin11: number;
  doneWithin15: number;
  lastHotDoneInMs: number;
  hotAttempts: number;
  hotThrottled: number;
}

export interface PacingResult {
  settings: PacingSettings;
  account: AccountThrottleRun[];
  splits: SplitsRun[];
  clients: ClientsRun[];
}

export async function runPacing(accountUrl: string, settings: PacingSettings, log: (line: string) => void = () => undefined): Promise<PacingResult> {
  const result: PacingResult = { settings, account: [], splits: [], clients: [] };
  for (let seed = 1; seed <= settings.seeds; seed++) {
    for (const id of ["sdk-default", "package"] as const) {
      const run = await accountThrottle(accountUrl, settings.account, id, seed);
      log(`pacing account ${id} seed ${seed}: ${run.succeeded}/${run.operations}, p99 ${run.p99InMs} ms, ${run.throttledAttempts} throttled attempts`);
      result.account.push(run);
    }
    for (const id of ["pacing-off", "package"] as const) {
      const run = await splits(settings.splits, id, seed);
      log(`pacing splits ${id} seed ${seed}: ${run.succeeded}/${run.operations} in ${run.elapsedInMs} ms, account paced ${run.accountPaced}`);
      result.splits.push(run);
    }
    for (const clients of settings.clients.counts) {
      const run = await hotClients(accountUrl, settings.clients, clients, seed);
      log(`pacing clients ${clients} seed ${seed}: ${run.doneWithin11}/${run.hotOperations} within 1.1x, ${run.doneWithin15} within 1.5x, ${run.hotThrottled}/${run.hotAttempts} throttled`);
      result.clients.push(run);
    }
  }
  return result;
}

/** Start times over `durationInMs` at `opsPerSecond`, each jittered within its slot by the seed. */
function schedule(opsPerSecond: number, durationInMs: number, random: () => number): number[] {
  const spacing = 1000 / opsPerSecond;
  const count = Math.floor((durationInMs / 1000) * opsPerSecond);
  return Array.from({ length: count }, (_, i) => (i + random()) * spacing);
}

interface Outcome {
  scheduledAt: number;
  endedAt: number;
  ok: boolean;
  hot?: boolean;
}

async function openLoop(starts: readonly number[], run: (i: number, signal: AbortSignal) => Promise<unknown>, maxDrainInMs: number, hot: (i: number) => boolean = () => false): Promise<Outcome[]> {
  const drain = new AbortController();
  const t0 = performance.now();
  const pending: Array<Promise<Outcome>> = [];
  for (let i = 0; i < starts.length; i++) {
    const scheduledAt = starts[i]!;
    const wait = t0 + scheduledAt - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(
      run(i, drain.signal).then(
        () => ({ scheduledAt, endedAt: performance.now() - t0, ok: true, hot: hot(i) }),
        () => ({ scheduledAt, endedAt: performance.now() - t0, ok: false, hot: hot(i) }),
      ),
    );
  }
  const timer = setTimeout(() => drain.abort(), maxDrainInMs);
  const outcomes = await Promise.all(pending);
  clearTimeout(timer);
  drain.abort();
  return outcomes;
}

export async function accountThrottle(accountUrl: string, s: PacingSettings["account"], id: AccountThrottleRun["id"], seed: number): Promise<AccountThrottleRun> {
  const random = mulberry32(seed * 7919);
  const table = benchTableName("acct", id);
  const direct = tableClient(accountUrl, table);
  await direct.createTable();
  let throttled = 0;
  const simulator: RebalancingSimulator = await startRebalancingSimulator({
    target: new URL(accountUrl).origin,
    service: "table",
    onRecord: (record) => {
      if (record.ruleName === "account") throttled += 1;
    },
  });
  const client = tableClient(`${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, table);
  const handle = id === "package" ? installResilience(client, { metrics: { registry: new Registry() } }) : undefined;
  try {
    for (let i = 0; i < 10; i++) await client.upsertEntity({ partitionKey: "warm", rowKey: `w${i}` }).catch(() => undefined);
    const starts = schedule(s.opsPerSecond, s.durationInMs, random);
    const partitions = starts.map(() => `a${Math.floor(random() * s.partitions)}`);
    // Every partition the workload uses: the account throttling as a whole.
    simulator.addFault({ name: "account", kind: "serverBusy", match: { partition: /^a\d+$/ }, startInMs: s.throttleStartInMs, durationInMs: s.throttleDurationInMs });
    const outcomes = await openLoop(
      starts,
      (i, signal) => client.upsertEntity({ partitionKey: partitions[i]!, rowKey: `r${i}`, i }, "Merge", { abortSignal: signal }),
      s.maxDrainInMs,
    );
    const latencies = outcomes.map((o) => o.endedAt - o.scheduledAt);
    const p99 = percentile(latencies, 99) ?? Number.NaN;
    const throttleEnd = s.throttleStartInMs + s.throttleDurationInMs;
    return {
      id,
      seed,
      operations: outcomes.length,
      succeeded: outcomes.filter((o) => o.ok).length,
      p99InMs: Math.round(p99),
      p99PastLimitInMs: Math.round(p99 - s.throttleDurationInMs),
      lastDoneAfterEndInMs: Math.round(Math.max(...outcomes.map((o) => o.endedAt)) - throttleEnd),
      throttledAttempts: throttled,
    };
  } finally {
    handle?.dispose();
    await simulator.stop();
    await direct.deleteTable().catch(() => undefined);
  }
}

const BUSY_HEADERS = createHttpHeaders({ "x-ms-error-code": "ServerBusy" });
const OK_HEADERS = createHttpHeaders();

export async function splits(s: PacingSettings["splits"], id: SplitsRun["id"], seed: number): Promise<SplitsRun> {
  const random = mulberry32(seed * 104_729);
  // Partition order shuffled by the seed; each partition answers 503 ServerBusy to its first request.
  const order = Array.from({ length: s.partitions }, (_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const seen = new Set<number>();
  const stub: HttpClient = {
    sendRequest: (request: PipelineRequest): Promise<PipelineResponse> => {
      const pk = Number(/PartitionKey='p(\d+)'/.exec(request.url)?.[1]);
      if (seen.has(pk)) return Promise.resolve({ request, status: 200, headers: OK_HEADERS });
      seen.add(pk);
      return Promise.resolve({ request, status: 503, headers: BUSY_HEADERS });
    },
  };
  const pipeline = createEmptyPipeline();
  // A short fixed backoff and no retry budget for both: the figure compared is what pacing adds (without
  // pacing, every retry here spends the budget, which a paced retry does not, and runs it dry).
  const handle = installResilience(pipeline, {
    service: "table",
    metrics: false,
    retryBudget: false,
    retry: { strategy: "fixed", delayInMs: 1 },
    ...(id === "pacing-off" ? { circuitBreaker: { pacing: false } } : {}),
  });
  let next = 0;
  let succeeded = 0;
  let accountPaced = false;
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (next < order.length) {
      const pk = order[next++]!;
      const request = createPipelineRequest({ url: `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}/orders(PartitionKey='p${pk}',RowKey='r')`, method: "GET" });
      const response = await pipeline.sendRequest(stub, request).catch(() => undefined);
      if (response?.status === 200) succeeded += 1;
      if (pk % 1000 === 0 && handle.circuitBreaker?.pacedScopes().some((p) => p.level === "account")) accountPaced = true;
    }
  };
  await Promise.all(Array.from({ length: s.inFlight }, worker));
  const elapsedInMs = Math.round(performance.now() - started);
  handle.dispose();
  return { id, seed, operations: order.length, succeeded, elapsedInMs, accountPaced };
}

export async function hotClients(accountUrl: string, s: PacingSettings["clients"], count: number, seed: number): Promise<ClientsRun> {
  const random = mulberry32(seed * 31_337 + count);
  const table = benchTableName("hotn", `c${count}`);
  const direct = tableClient(accountUrl, table);
  await direct.createTable();
  let hotAttempts = 0;
  let hotThrottled = 0;
  let recording = false;
  const simulator: RebalancingSimulator = await startRebalancingSimulator({
    target: new URL(accountUrl).origin,
    service: "table",
    onRecord: (record) => {
      if (!recording || record.scope?.partition !== "hot") return;
      hotAttempts += 1;
      if (record.ruleName === "hot") hotThrottled += 1;
    },
  });
  // N app instances: N clients, each with its own install (its own breaker and pacers), sharing nothing.
  const clients = Array.from({ length: count }, () => tableClient(`${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, table));
  const handles = clients.map((client) => installResilience(client, { metrics: { registry: new Registry() } }));
  try {
    for (const client of clients) for (let i = 0; i < 3; i++) await client.upsertEntity({ partitionKey: "warm", rowKey: `w${i}` }).catch(() => undefined);
    simulator.addFault({ name: "hot", kind: "throttle", match: { partition: "hot" }, ratePerSecond: s.capacityPerSecond });
    const starts = schedule(s.opsPerSecond, s.durationInMs, random);
    const owner = starts.map(() => Math.floor(random() * count));
    const isHot = (i: number): boolean => i % 2 === 0;
    recording = true;
    const outcomes = await openLoop(
      starts,
      (i, signal) => clients[owner[i]!]!.upsertEntity({ partitionKey: isHot(i) ? "hot" : `cool${i % 9}`, rowKey: `r${i}`, i }, "Merge", { abortSignal: signal }),
      s.maxDrainInMs,
      isHot,
    );
    recording = false;
    const hot = outcomes.filter((o) => o.hot);
    const needInMs = (hot.length / s.capacityPerSecond) * 1000;
    const done = (factor: number) => hot.filter((o) => o.ok && o.endedAt <= factor * needInMs).length;
    return {
      clients: count,
      seed,
      hotOperations: hot.length,
      hotSucceeded: hot.filter((o) => o.ok).length,
      doneWithin11: done(1.1),
      doneWithin15: done(1.5),
      lastHotDoneInMs: Math.round(Math.max(...hot.map((o) => o.endedAt))),
      hotAttempts,
      hotThrottled,
    };
  } finally {
    for (const handle of handles) handle.dispose();
    await simulator.stop();
    await direct.deleteTable().catch(() => undefined);
  }
}

/** Min and max of `values`, rounded. */
export function span(values: readonly number[], digits = 0): string {
  if (values.length === 0) return "–";
  const lo = round(Math.min(...values), digits);
  const hi = round(Math.max(...values), digits);
  return lo === hi ? `${lo}` : `${lo}–${hi}`;
}
