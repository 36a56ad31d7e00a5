// Benchmark 1: what this package's policies cost on the success path, next to the SDK's
// defaultRetryPolicy, in interleaved rounds in one process.
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  defaultRetryPolicy,
  type HttpClient,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { installResilience, type ResilienceHandle } from "../src/index.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "azure-storage-resilience/testing";
import { median, percentile, round } from "../tools/report/stats.js";
import { startTracing } from "./tracing.js";

/**
 * The speed guard (issue 24, replacing the bare mock pipeline's 2.5x budget, which is now
 * reported, not targeted): `TableClient.getEntity` on the mock transport, everything on, as a
 * ratio to the SDK client. On Azurite the rule is to stay within the controls' noise.
 */
export const CLIENT_GUARD = 1.1;

/** How much work each part of the overhead benchmark does. */
export interface OverheadSettings {
  /** Rounds measured on the bare mock pipeline (each round runs every variant once, in rotated order). */
  mockRounds: number;
  /** Requests per variant per round on the bare mock pipeline. */
  mockRequestsPerRound: number;
  /** Rounds measured through a TableClient on the mock transport. */
  clientRounds: number;
  /** getEntity calls per variant per round through a TableClient on the mock transport. */
  clientRequestsPerRound: number;
  /** Rounds of point reads against Azurite. */
  azuriteRounds: number;
  /** Point reads per client per Azurite round. */
  azuriteReadsPerRound: number;
  /** Rounds run first and thrown away in each comparison, so the JIT has settled. */
  warmupRounds: number;
}

// Many short rounds rather than a few long ones: on a shared machine the median of short
// rounds shrugs off the rounds another process preempted, and every round still holds
// several young-generation GCs, so allocation costs stay in the figures.
export const FULL_OVERHEAD_SETTINGS: OverheadSettings = {
  mockRounds: 200,
  mockRequestsPerRound: 2_000,
  clientRounds: 150,
  clientRequestsPerRound: 300,
  azuriteRounds: 200,
  azuriteReadsPerRound: 20,
  warmupRounds: 20,
};

export const SMOKE_OVERHEAD_SETTINGS: OverheadSettings = {
  mockRounds: 2,
  mockRequestsPerRound: 300,
  clientRounds: 2,
  clientRequestsPerRound: 50,
  azuriteRounds: 2,
  azuriteReadsPerRound: 5,
  warmupRounds: 1,
};

/** One variant's figures in a comparison. */
export interface VariantFigures {
  id: string;
  label: string;
  breaker: boolean | undefined;
  metrics: boolean | undefined;
  /** Median over rounds of the per-round mean cost of one request. */
  nsPerRequest: number;
  /** Median over rounds of (this variant / the SDK baseline in the same round). */
  ratio: number;
  /** 25th and 75th percentile of the per-round ratios. */
  ratioP25: number;
  ratioP75: number;
}

/** One comparison: the SDK baseline and our variants, measured in the same rounds. */
export interface Comparison {
  name: string;
  rounds: number;
  requestsPerRound: number;
  /** The target for the everything-on variant's ratio, when the issue sets one. */
  target: number | undefined;
  variants: VariantFigures[];
}

export interface OverheadResult {
  settings: OverheadSettings;
  mockPipeline: Comparison;
  /** The same, on a mock transport that reads the request URL once, as every real transport does. */
  mockPipelineUrlRead: Comparison;
  mockTableClient: Comparison;
  azurite: Comparison | undefined;
  /**
   * TableClient.getEntity on the mock transport with OpenTelemetry tracing on (a tracer provider
   * and the Azure SDK's instrumentation): the SDK client traced, ours traced, ours with `tracing: false`.
   */
  mockTableClientTraced?: Comparison;
}

/** What a variant is made of; `run(n)` sends n requests one after another and resolves. */
interface Variant {
  id: string;
  label: string;
  breaker: boolean | undefined;
  metrics: boolean | undefined;
  prepare(n: number): void;
  run(): Promise<void>;
  dispose(): void;
}

const BASE_URL = `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}`;
const PARTITIONS = 100;
const RESPONSE_HEADERS = createHttpHeaders({ "content-type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8" });

/** Answers 200 at once, to whatever it is sent. */
const emptyOk: HttpClient = {
  sendRequest: (request: PipelineRequest): Promise<PipelineResponse> => Promise.resolve({ request, status: 200, headers: RESPONSE_HEADERS }),
};

/**
 * Answers 200 at once too, after reading each character of the request URL once (one
 * native scan for a character no URL holds): the least any real transport does (the SDK's
 * Node client parses it with `new URL()`). Without it, nothing in the bare pipeline reads
 * the URL but our address reader, so it pays for bringing the URL's memory into
 * the cache, which in a real pipeline the transport and the signing policy do anyway.
 */
let urlReadSink = 0;
const urlReadingOk: HttpClient = {
  sendRequest: (request: PipelineRequest): Promise<PipelineResponse> => {
    if (request.url.indexOf("\u0000") !== -1) urlReadSink += 1; // used below, so the scan is not optimised away
    return Promise.resolve({ request, status: 200, headers: RESPONSE_HEADERS });
  },
};

/** Answers 200 with an entity body, as the Tables service answers a point read. */
const entityOk: HttpClient = {
  sendRequest: (request: PipelineRequest): Promise<PipelineResponse> =>
    Promise.resolve({
      request,
      status: 200,
      headers: RESPONSE_HEADERS,
      bodyAsText: '{"odata.metadata":"x","PartitionKey":"p1","RowKey":"r1","Timestamp":"2026-01-01T00:00:00Z","value":1}',
    }),
};

/** The four ways of configuring us, plus the SDK's own retry policy as the baseline. */
const FLAVOURS: readonly Flavour[] = [
  { id: "sdk", label: "SDK defaultRetryPolicy", ours: false, breaker: undefined, metrics: undefined },
  { id: "all", label: "this package: breaker on, metrics on", ours: true, breaker: true, metrics: true },
  { id: "breaker", label: "this package: breaker on, metrics off", ours: true, breaker: true, metrics: false },
  { id: "metrics", label: "this package: breaker off, metrics on", ours: true, breaker: false, metrics: true },
  { id: "bare", label: "this package: breaker off, metrics off", ours: true, breaker: false, metrics: false },
];

/**
 * More clients in the Azurite comparison: a second plain SDK client, whose ratio is the
 * measurement's own noise and bias (it should read 1.00x); the SDK client with an abort
 * signal on every call, and ours with everything on but the per-attempt timeout, because
 * any abort signal on a request makes the SDK's Node HTTP client do more work (a listener
 * on it, and a clean-up once the body is read), and our per-attempt timeout needs one.
 */
const AZURITE_CONTROLS: readonly Flavour[] = [
  { id: "sdk-again", label: "SDK defaultRetryPolicy, a second client (noise floor)", ours: false, breaker: undefined, metrics: undefined },
  {
    id: "sdk-signal",
    label: "SDK defaultRetryPolicy, each call given an abort signal",
    ours: false,
    breaker: undefined,
    metrics: undefined,
    callerSignal: true,
  },
  {
    id: "all-no-timeout",
    label: "this package: everything on, no per-attempt timeout (tryTimeoutInMs 0, maxElapsedInMs Infinity)",
    ours: true,
    breaker: true,
    metrics: true,
    timeouts: false,
  },
];

interface Flavour {
  id: string;
  label: string;
  ours: boolean;
  breaker: boolean | undefined;
  metrics: boolean | undefined;
  /** False turns the per-attempt timeout off; the preset's otherwise. */
  timeouts?: false;
  /** Each call gets an abort signal of its own, as a caller that can cancel would pass. */
  callerSignal?: true;
  /** False turns the package's tracing (span events, resend count) off; on by default. */
  tracing?: false;
}

/** Everything on but the package's tracing: what tracing costs, beside `all`, in the same rounds. */
const NO_TRACING: Flavour = { id: "all-no-tracing", label: "this package: everything on but tracing (tracing: false)", ours: true, breaker: true, metrics: true, tracing: false };

function install(target: unknown, flavour: Flavour): ResilienceHandle | undefined {
  if (!flavour.ours) return undefined;
  return installResilience(target, {
    service: "table",
    circuitBreaker: flavour.breaker ? undefined : false,
    // A fresh registry per variant: never the global one, and no sharing between variants.
    metrics: flavour.metrics ? { registry: new Registry() } : false,
    ...(flavour.timeouts === false ? { tryTimeoutInMs: 0, maxElapsedInMs: Infinity } : {}),
    ...(flavour.tracing === false ? { tracing: false as const } : {}),
  });
}

/** Distinct entities (100 partitions, a new row each time), so no per-URL cache could flatter us. */
function pointReadUrl(i: number): string {
  return `${BASE_URL}/bench(PartitionKey='p${i % PARTITIONS}',RowKey='r${i}')`;
}

/** A bare pipeline holding only the retry policy, sent to the mock transport. */
function mockPipelineVariant(flavour: Flavour, transport: HttpClient = emptyOk): Variant {
  const pipeline = createEmptyPipeline();
  pipeline.addPolicy(defaultRetryPolicy(), { phase: "Retry" });
  const handle = install(pipeline, flavour);
  let requests: PipelineRequest[] = [];
  let offset = 0;
  return {
    ...flavour,
    // Fresh request objects every round (the breaker caches per request), built outside the timed loop.
    prepare(n) {
      requests = Array.from({ length: n }, (_, i) => createPipelineRequest({ url: pointReadUrl(offset + i), method: "GET" }));
      offset += n;
    },
    async run() {
      for (const request of requests) await pipeline.sendRequest(transport, request);
    },
    dispose: () => handle?.dispose(),
  };
}

/** A real TableClient (SharedKey signing, serialization, deserialization) on the mock transport. */
function mockClientVariant(flavour: Flavour): Variant {
  const client = new TableClient(BASE_URL, "bench", new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY), {
    httpClient: entityOk,
    allowInsecureConnection: true,
  });
  const handle = install(client, flavour);
  let n = 0;
  let offset = 0;
  return {
    ...flavour,
    prepare(count) {
      n = count;
    },
    async run() {
      for (let i = offset; i < offset + n; i++) await client.getEntity(`p${i % PARTITIONS}`, `r${i}`);
      offset += n;
    },
    dispose: () => handle?.dispose(),
  };
}

/** A variant whose requests can be timed one at a time, alternating with another variant's. */
interface PairedVariant {
  id: string;
  label: string;
  breaker: boolean | undefined;
  metrics: boolean | undefined;
  /** Sends one request and resolves when it is done. */
  one(): Promise<unknown>;
  dispose(): void;
}

/** A real TableClient reading seeded entities from Azurite. */
function azuriteVariant(flavour: Flavour, tableUrl: string, table: string, partitions: number): PairedVariant {
  const client = new TableClient(tableUrl, table, new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY), {
    allowInsecureConnection: true,
  });
  const handle = install(client, flavour);
  let i = 0;
  return {
    ...flavour,
    one: () => client.getEntity(`p${i++ % partitions}`, "r1", flavour.callerSignal ? { abortSignal: new AbortController().signal } : undefined),
    dispose: () => handle?.dispose(),
  };
}

/**
 * Runs every variant once per round, the order rotated each round so no variant always
 * follows the same one; returns each variant's per-round mean ns/request.
 */
async function interleave(variants: Variant[], rounds: number, warmupRounds: number, perRound: number): Promise<Map<string, number[]>> {
  const samples = new Map(variants.map((v) => [v.id, [] as number[]]));
  for (let r = 0; r < warmupRounds + rounds; r++) {
    for (let k = 0; k < variants.length; k++) {
      const variant = variants[(r + k) % variants.length] as Variant;
      variant.prepare(perRound);
      const started = process.hrtime.bigint();
      await variant.run();
      const elapsed = Number(process.hrtime.bigint() - started);
      if (r >= warmupRounds) samples.get(variant.id)?.push(elapsed / perRound);
    }
  }
  return samples;
}

/**
 * For round trips through a server that shares the machine: requests alternate between the
 * variants one by one (the order flipped every request), each timed on its own, so that
 * every variant meets the same moments of contention; a round's figure is each variant's
 * mean over its requests in that round.
 */
async function alternate(variants: PairedVariant[], rounds: number, warmupRounds: number, perRound: number): Promise<Map<string, number[]>> {
  const samples = new Map(variants.map((v) => [v.id, [] as number[]]));
  const sums = new Map(variants.map((v) => [v.id, 0]));
  for (let r = 0; r < warmupRounds + rounds; r++) {
    for (const v of variants) sums.set(v.id, 0);
    for (let i = 0; i < perRound; i++) {
      for (let k = 0; k < variants.length; k++) {
        const variant = variants[(i + r + k) % variants.length] as PairedVariant;
        const started = process.hrtime.bigint();
        await variant.one();
        sums.set(variant.id, (sums.get(variant.id) ?? 0) + Number(process.hrtime.bigint() - started));
      }
    }
    if (r >= warmupRounds) for (const v of variants) samples.get(v.id)?.push((sums.get(v.id) ?? 0) / perRound);
  }
  return samples;
}

function summarize(
  name: string,
  variants: ReadonlyArray<Pick<Variant, "id" | "label" | "breaker" | "metrics">>,
  samples: Map<string, number[]>,
  perRound: number,
  target: number | undefined,
  digits: number,
): Comparison {
  const baseline = samples.get("sdk") ?? [];
  return {
    name,
    rounds: baseline.length,
    requestsPerRound: perRound,
    target,
    variants: variants.map((v) => {
      const mine = samples.get(v.id) ?? [];
      const ratios = mine.map((value, i) => value / (baseline[i] ?? Number.NaN));
      return {
        id: v.id,
        label: v.label,
        breaker: v.breaker,
        metrics: v.metrics,
        nsPerRequest: round(median(mine) ?? Number.NaN, digits),
        ratio: round(median(ratios) ?? Number.NaN, 3),
        ratioP25: round(percentile(ratios, 25) ?? Number.NaN, 3),
        ratioP75: round(percentile(ratios, 75) ?? Number.NaN, 3),
      };
    }),
  };
}

async function compare(
  name: string,
  variants: Variant[],
  rounds: number,
  warmupRounds: number,
  perRound: number,
  target: number | undefined,
): Promise<Comparison> {
  try {
    const samples = await interleave(variants, rounds, warmupRounds, perRound);
    return summarize(name, variants, samples, perRound, target, 0);
  } finally {
    for (const variant of variants) variant.dispose();
  }
}

/** Where the Azurite comparison reads from: a table with one entity `r1` in each of `partitions` partitions. */
export interface AzuriteTarget {
  tableUrl: string;
  table: string;
  partitions: number;
}

/** Runs the three comparisons; the Azurite one only when a seeded table is given. */
export async function runOverhead(settings: OverheadSettings, azurite?: AzuriteTarget): Promise<OverheadResult> {
  const { warmupRounds } = settings;
  const mockPipeline = await compare(
    "bare pipeline, mock transport",
    FLAVOURS.map((f) => mockPipelineVariant(f)),
    settings.mockRounds,
    warmupRounds,
    settings.mockRequestsPerRound,
    undefined,
  );
  const mockPipelineUrlRead = await compare(
    "bare pipeline, mock transport that reads the URL",
    FLAVOURS.map((f) => mockPipelineVariant(f, urlReadingOk)),
    settings.mockRounds,
    warmupRounds,
    settings.mockRequestsPerRound,
    undefined,
  );
  if (urlReadSink > 0) throw new Error("a bench URL held a NUL character");
  const clientFlavours = [...FLAVOURS.filter((f) => f.id === "sdk" || f.id === "all" || f.id === "bare"), NO_TRACING];
  const mockTableClient = await compare(
    "TableClient.getEntity, mock transport",
    clientFlavours.map(mockClientVariant),
    settings.clientRounds,
    warmupRounds,
    settings.clientRequestsPerRound,
    CLIENT_GUARD,
  );
  let azuriteComparison: Comparison | undefined;
  if (azurite !== undefined) {
    const variants = [...FLAVOURS.filter((f) => f.id === "sdk" || f.id === "all"), ...AZURITE_CONTROLS].map((f) =>
      azuriteVariant(f, azurite.tableUrl, azurite.table, azurite.partitions),
    );
    try {
      const samples = await alternate(variants, settings.azuriteRounds, warmupRounds, settings.azuriteReadsPerRound);
      azuriteComparison = summarize("TableClient.getEntity, Azurite round trip", variants, samples, settings.azuriteReadsPerRound, undefined, 0);
    } finally {
      for (const variant of variants) variant.dispose();
    }
  }
  // Last, so that nothing before it runs with a tracer installed.
  const tracing = startTracing();
  let mockTableClientTraced: Comparison;
  try {
    mockTableClientTraced = await compare(
      "TableClient.getEntity, mock transport, OpenTelemetry tracing on",
      [FLAVOURS.find((f) => f.id === "sdk") as Flavour, FLAVOURS.find((f) => f.id === "all") as Flavour, NO_TRACING].map(mockClientVariant),
      settings.clientRounds,
      warmupRounds,
      settings.clientRequestsPerRound,
      undefined,
    );
  } finally {
    await tracing.stop();
  }
  return { settings, mockPipeline, mockPipelineUrlRead, mockTableClient, azurite: azuriteComparison, mockTableClientTraced };
}
