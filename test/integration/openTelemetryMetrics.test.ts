import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { createOpenTelemetryMetricsObserver, installResilience, type ResilienceHandle } from "../../src/index.js";
import { OPEN_TELEMETRY_ATTRIBUTES as ATTR } from "../../src/metrics/metricNames.js";
import { OPEN_TELEMETRY_METRICS as OTEL } from "../../src/metrics/openTelemetryObserver.js";
import { inMemoryMetrics, openTelemetrySeries, otelSum, pointsOf, prometheusSeries, type InMemoryMetrics } from "../support/openTelemetryMetrics.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// The OpenTelemetry sink on a real TableClient through the rebalancing simulator in front of
// Azurite, read by the OpenTelemetry SDK (MeterProvider, InMemoryMetricExporter): its numbers
// equal what the simulator counted at the wire, and the Prometheus sink's for the same run.

const env = withTableSimulator({ seed: 18 });
let table: string;
let client: TableClient;
let sdk: InMemoryMetrics;
let handle: ResilienceHandle | undefined;

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("otel");
  await env.directTableClient(table).createTable();
  env.simulator.resetRecords();
  client = env.tableClient(table);
  sdk = inMemoryMetrics();
});

afterEach(async () => {
  handle?.dispose();
  handle = undefined;
  await sdk.shutdown();
});

/** Matches the first request with `method` only, once. */
const firstWrite = (method: string) => {
  let seen = false;
  return { method, predicate: () => (seen ? false : (seen = true)) };
};

describe("OpenTelemetry metrics (real TableClient, Azurite, the OpenTelemetry SDK)", () => {
  it("installResilience(client, { metrics: { meter } }) counts what the simulator saw", async () => {
    handle = installResilience(client, { retry: { strategy: "fixed", maxRetries: 3, delayInMs: 10 }, metrics: { meter: sdk.provider.getMeter("app") } });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "busy" }, count: 2 });
    await client.createEntity({ partitionKey: "busy", rowKey: "r1" });
    for (let i = 0; i < 3; i++) await client.createEntity({ partitionKey: "ok", rowKey: `r${i}` });
    await client.getEntity("ok", "r0");

    const metrics = await sdk.collect();
    const insert = { [ATTR.service]: "table", [ATTR.operation]: "insert_entity" };
    expect(otelSum(metrics, OTEL.attempts.name)).toBe(env.simulator.totals.requests);
    expect(otelSum(metrics, OTEL.attempts.name, { ...insert, [ATTR.class]: "throttled" })).toBe(env.simulator.count({ fault: "serverBusy" }));
    expect(otelSum(metrics, OTEL.throttles.name, { ...insert, "http.response.status_code": 503, [ATTR.error_code]: "ServerBusy" })).toBe(2);
    expect(otelSum(metrics, OTEL.retries.name, { [ATTR.reason]: "throttled" })).toBe(2);
    // Operations are the duration histogram's count: 4 inserts and 1 read, all successful.
    expect(otelSum(metrics, OTEL.operationDuration.name, { ...insert, [ATTR.outcome]: "success" })).toBe(4);
    expect(otelSum(metrics, OTEL.operationDuration.name, { [ATTR.operation]: "get_entity", [ATTR.outcome]: "success" })).toBe(1);
    // The circuit gauge is read from the client's breaker at collection time.
    expect(pointsOf(metrics, OTEL.circuitBreakers.name).map((p) => p.attributes[ATTR.state]).sort()).toEqual(["closed", "half_open", "open"]);
    expect(otelSum(metrics, OTEL.circuitBreakers.name, { [ATTR.state]: "open" })).toBe(0);
  });

  it("reports the same numbers as the Prometheus sink for the same run", async () => {
    const registry = new Registry();
    const openTelemetry = createOpenTelemetryMetricsObserver("table", { meter: sdk.provider.getMeter("app") });
    handle = installResilience(client, {
      retry: { strategy: "fixed", maxRetries: 3, delayInMs: 10 },
      tryTimeoutInMs: 400,
      metrics: { registry },
      observers: [openTelemetry],
    });
    if (handle.circuitBreaker) openTelemetry.observeCircuits(handle.circuitBreaker);
    const sim = env.simulator;
    sim.addFault({ kind: "serverBusy", match: { partition: "busy" }, count: 2 });
    sim.addFault({ kind: "operationTimedOut", match: { partition: "timed" }, count: 1 });
    sim.addFault({ kind: "serverBusy", match: { partition: "exhaust" } });
    sim.addFault({ kind: "failChangeset", status: 503, errorCode: "ServerBusy", count: 1 });
    sim.addFault({ kind: "resetAfterForward", match: { ...firstWrite("POST"), partition: "reset" } });

    await client.createEntity({ partitionKey: "busy", rowKey: "r1" });
    await client.upsertEntity({ partitionKey: "timed", rowKey: "r1" });
    await client.createEntity({ partitionKey: "exhaust", rowKey: "r1" }).catch((e: unknown) => e);
    await client.createEntity({ partitionKey: "reset", rowKey: "r1" });
    await client.submitTransaction([["create", { partitionKey: "batch", rowKey: "b1" }], ["create", { partitionKey: "batch", rowKey: "b2" }]]);
    await client.getEntity("busy", "r1");
    await client.deleteEntity("busy", "r1");

    const prometheus = await prometheusSeries(registry);
    const otel = openTelemetrySeries(await sdk.collect());
    console.info(`series compared: ${Object.keys(prometheus).length}`);
    expect(otel).toEqual(prometheus);
    // The run did exercise what it meant to: throttles, exhaustion, a changeset failure, an ambiguous write.
    expect(prometheus["throttles|service=table,operation=insert_entity,status=503,error_code=ServerBusy"]).toBeGreaterThanOrEqual(2 + 4);
    expect(prometheus["retriesExhausted|service=table,operation=insert_entity,class=throttled"]).toBe(1);
    expect(prometheus["batchChangesetFailures|service=table,class=throttled"]).toBe(1);
    expect(prometheus["ambiguousWritesResolved|service=table,operation=insert_entity,result=applied"]).toBe(1);
    expect(Object.keys(prometheus).length).toBeGreaterThan(30);
  });
});
