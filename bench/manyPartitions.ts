// Benchmark 3: memory and circuit count after a great many distinct partition scopes
// have gone through, one request each, on a mock transport that answers 200 (and, for
// this package, once more with every scope answering 503 once, so that every scope gets
// a circuit and a pacer).
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  defaultRetryPolicy,
  type HttpClient,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { Registry } from "prom-client";
import { installResilience } from "../src/index.js";
import { DEVSTORE_ACCOUNT_NAME } from "azure-storage-resilience/testing";
import { createCockatielWiring } from "./cockatielWiring.js";
import { heapUsedInMb } from "./gc.js";
import { round } from "../tools/report/stats.js";

export interface ManyPartitionsSettings {
  /** Distinct partition scopes sent, one request each. */
  scopes: number;
}

export const FULL_MANY_PARTITIONS_SETTINGS: ManyPartitionsSettings = { scopes: 1_000_000 };
export const SMOKE_MANY_PARTITIONS_SETTINGS: ManyPartitionsSettings = { scopes: 3_000 };

/** One row: a configuration after every scope went through. */
export interface ManyPartitionsFigures {
  id: "sdk-default" | "package" | "package-503" | "cockatiel";
  label: string;
  scopes: number;
  elapsedInMs: number;
  /** Heap in use after a full GC, before the first request and after the last. */
  heapBeforeInMb: number;
  heapAfterInMb: number;
  heapGrowthInMb: number;
  /** Live circuits after the last request, and the most seen at once. */
  circuits: number | undefined;
  maxCircuits: number | undefined;
  /** Prometheus series exported (this package only), after the last request. */
  metricSeries: number | undefined;
  /** Heap after dispose (this package) or after dropping the wiring (cockatiel). */
  heapAfterReleaseInMb: number;
}

export interface ManyPartitionsResult {
  settings: ManyPartitionsSettings;
  rows: ManyPartitionsFigures[];
}

const HEADERS = createHttpHeaders();
const ok: HttpClient = {
  sendRequest: (request: PipelineRequest): Promise<PipelineResponse> => Promise.resolve({ request, status: 200, headers: HEADERS }),
};
const BUSY_HEADERS = createHttpHeaders({ "x-ms-error-code": "ServerBusy" });
/** Every scope's request meets a rebalancing failure, so every scope gets a circuit: the breaker's worst case for memory. */
const busy: HttpClient = {
  sendRequest: (request: PipelineRequest): Promise<PipelineResponse> => Promise.resolve({ request, status: 503, headers: BUSY_HEADERS }),
};

function request(i: number): PipelineRequest {
  return createPipelineRequest({ url: `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}/orders(PartitionKey='p${i}',RowKey='r')`, method: "GET" });
}

/** Successes sent before each scope's 503: enough that the account's throttled answers never outnumber them. */
const SUCCESSES_PER_503 = 2;

/** How often (in requests) the live circuit count is sampled. */
const SAMPLE_EVERY = 1_000;

/** Time and heap figures every row has, read right after the last request (the heap after a full GC). */
type RunFigures = Pick<ManyPartitionsFigures, "scopes" | "elapsedInMs" | "heapBeforeInMb" | "heapAfterInMb" | "heapGrowthInMb">;

function runFigures(scopes: number, started: number, heapBeforeInMb: number): RunFigures {
  const elapsedInMs = Math.round(performance.now() - started);
  const heapAfterInMb = heapUsedInMb();
  return { scopes, elapsedInMs, heapBeforeInMb, heapAfterInMb, heapGrowthInMb: round(heapAfterInMb - heapBeforeInMb, 1) };
}

async function throughPackage(scopes: number, failing: boolean): Promise<ManyPartitionsFigures> {
  const registry = new Registry();
  const pipeline = createEmptyPipeline();
  pipeline.addPolicy(defaultRetryPolicy(), { phase: "Retry" });
  // Retries off when every answer is a 503: one attempt per scope, as in the 200 run.
  const handle = installResilience(pipeline, { service: "table", metrics: { registry }, ...(failing ? { retry: { strategy: "none" } } : {}) });
  const breaker = handle.circuitBreaker;
  const heapBeforeInMb = heapUsedInMb();
  const started = performance.now();
  let maxCircuits = 0;
  for (let i = 0; i < scopes; i++) {
    // Two successes before each 503: a storm of hot keys in an account that serves. With
    // nothing but 503s the account-wide pacer engages (the account throttling as a whole)
    // and refuses most scopes before they are sent, so they would get no state to measure.
    if (failing) for (let s = 0; s < SUCCESSES_PER_503; s++) await pipeline.sendRequest(ok, request(i));
    await pipeline.sendRequest(failing ? busy : ok, request(i));
    if (i % SAMPLE_EVERY === 0) maxCircuits = Math.max(maxCircuits, breaker?.size ?? 0);
  }
  const run = runFigures(scopes, started, heapBeforeInMb);
  maxCircuits = Math.max(maxCircuits, breaker?.size ?? 0);
  const metricSeries = (await registry.getMetricsAsJSON()).reduce((n, metric) => n + metric.values.length, 0);
  const circuits = breaker?.size;
  handle.dispose();
  return {
    id: failing ? "package-503" : "package",
    label: failing ? "this package, every scope answering 503 once amid successes (a circuit and a pacer each)" : "this package (defaults: breaker and metrics on)",
    ...run,
    circuits,
    maxCircuits,
    metricSeries,
    heapAfterReleaseInMb: heapUsedInMb(),
  };
}

async function throughSdk(scopes: number): Promise<ManyPartitionsFigures> {
  const pipeline = createEmptyPipeline();
  pipeline.addPolicy(defaultRetryPolicy(), { phase: "Retry" });
  const heapBeforeInMb = heapUsedInMb();
  const started = performance.now();
  for (let i = 0; i < scopes; i++) await pipeline.sendRequest(ok, request(i));
  const run = runFigures(scopes, started, heapBeforeInMb);
  return {
    id: "sdk-default",
    label: "SDK defaultRetryPolicy (no per-partition state)",
    ...run,
    circuits: undefined,
    maxCircuits: undefined,
    metricSeries: undefined,
    heapAfterReleaseInMb: run.heapAfterInMb,
  };
}

async function throughCockatiel(scopes: number): Promise<ManyPartitionsFigures> {
  // Measured once the wiring, and every breaker in it, is out of scope.
  const figures = await cockatielRun(scopes);
  return { ...figures, heapAfterReleaseInMb: heapUsedInMb() };
}

async function cockatielRun(scopes: number): Promise<Omit<ManyPartitionsFigures, "heapAfterReleaseInMb">> {
  // The SDK client under cockatiel runs without its own retry: an empty pipeline here.
  const pipeline = createEmptyPipeline();
  const wiring = createCockatielWiring();
  const heapBeforeInMb = heapUsedInMb();
  const started = performance.now();
  for (let i = 0; i < scopes; i++) await wiring.run(`p${i}`, () => pipeline.sendRequest(ok, request(i)));
  const run = runFigures(scopes, started, heapBeforeInMb);
  const circuits = wiring.size;
  return {
    id: "cockatiel",
    label: "cockatiel, one breaker per partition key in a Map",
    ...run,
    circuits,
    maxCircuits: circuits,
    metricSeries: undefined,
  };
}

/** Sends `settings.scopes` distinct partition scopes through each configuration in turn. */
export async function runManyPartitions(settings: ManyPartitionsSettings): Promise<ManyPartitionsResult> {
  const rows = [await throughSdk(settings.scopes), await throughPackage(settings.scopes, false),
    await throughPackage(settings.scopes, true),
    await throughCockatiel(settings.scopes)];
  return { settings, rows };
}
