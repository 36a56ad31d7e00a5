import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { createOpenTelemetryMetricsObserver, installResilience, type ResilienceHandle } from "../../src/index.js";
import { OPEN_TELEMETRY_ATTRIBUTES as ATTR } from "../../src/metrics/metricNames.js";
import { OPEN_TELEMETRY_METRICS as OTEL } from "../../src/metrics/openTelemetryObserver.js";
import { sampleValue } from "../unit/metrics/metricsTestKit.js";
import { inMemoryMetrics, otelSum, type InMemoryMetrics } from "../support/openTelemetryMetrics.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// A real TableClient on Azurite (through the simulator, which only counts here but for the 403):
// the answers to what was asked (an absent entity, an existing table or entity, a stale ETag) are
// counted apart from failures on both sinks; a missing table under a query and a 403 stay failures.

const env = withTableSimulator({ seed: 37 });
let table: string;
let client: TableClient;
let registry: Registry;
let sdk: InMemoryMetrics;
let handle: ResilienceHandle | undefined;

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("outcomes");
  await env.directTableClient(table).createTable();
  await env.directTableClient(table).createEntity({ partitionKey: "p1", rowKey: "present", n: 1 });
  env.simulator.resetRecords();
  registry = new Registry();
  sdk = inMemoryMetrics();
  client = env.tableClient(table);
  const openTelemetry = createOpenTelemetryMetricsObserver("table", { meter: sdk.provider.getMeter("app") });
  handle = installResilience(client, { metrics: { registry }, observers: [openTelemetry] });
});

afterEach(async () => {
  handle?.dispose();
  handle = undefined;
  await sdk.shutdown();
});

const operations = (operation: string, outcome: string) =>
  sampleValue(registry, "azure_storage_operations_total", { service: "table", operation, outcome });

describe("operations_total's outcome on a real TableClient (Azurite)", () => {
  it("a getEntity answered 404 counts as not_found, not failure, on both sinks", async () => {
    await client.getEntity("p1", "present");
    const missing = await client.getEntity("p1", "absent").catch((error: unknown) => error);
    expect(missing).toMatchObject({ statusCode: 404 });
    // One request each: a 404 is not retried.
    expect(env.simulator.count({ status: 404 })).toBe(1);

    expect(await operations("get_entity", "not_found")).toBe(1);
    expect(await operations("get_entity", "failure")).toBe(0);
    expect(await operations("get_entity", "success")).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operation_duration_seconds_count", { service: "table", operation: "get_entity", outcome: "not_found" })).toBe(1);
    const metrics = await sdk.collect();
    const read = { [ATTR.service]: "table", [ATTR.operation]: "get_entity" };
    expect(otelSum(metrics, OTEL.operationDuration.name, { ...read, [ATTR.outcome]: "not_found" })).toBe(1);
    expect(otelSum(metrics, OTEL.operationDuration.name, { ...read, [ATTR.outcome]: "failure" })).toBe(0);
  });

  it("a createTable of a table that exists, an insert of an entity that exists, a stale ETag and a delete of an absent entity are answers too", async () => {
    await client.createTable(); // 409 TableAlreadyExists, which the SDK swallows
    expect(await client.createEntity({ partitionKey: "p1", rowKey: "present" }).catch((e: unknown) => e)).toMatchObject({ statusCode: 409 });
    const stale = (await client.getEntity("p1", "present")).etag;
    await client.updateEntity({ partitionKey: "p1", rowKey: "present", n: 2 }, "Merge", { etag: stale });
    const lost = await client.updateEntity({ partitionKey: "p1", rowKey: "present", n: 3 }, "Merge", { etag: stale }).catch((e: unknown) => e);
    expect(lost).toMatchObject({ statusCode: 412 });
    expect(await client.deleteEntity("p1", "absent").catch((e: unknown) => e)).toMatchObject({ statusCode: 404 });

    expect(await operations("create_table", "conflict")).toBe(1);
    expect(await operations("insert_entity", "conflict")).toBe(1);
    expect(await operations("update_entity", "precondition_failed")).toBe(1);
    expect(await operations("update_entity", "success")).toBe(1);
    expect(await operations("delete_entity", "not_found")).toBe(1);
    for (const operation of ["create_table", "insert_entity", "update_entity", "delete_entity"]) expect(await operations(operation, "failure"), operation).toBe(0);
  });

  it("a 404 from a query across partitions of a missing table, and a 403, stay failures", async () => {
    const missingTable = env.tableClient(uniqueTableName("missing"));
    const missingHandle = installResilience(missingTable, { metrics: { registry } });
    try {
      const iterator = missingTable.listEntities({ queryOptions: { filter: "RowKey eq 'r1'" } });
      expect(await iterator.next().catch((e: unknown) => e)).toMatchObject({ statusCode: 404 });
    } finally {
      missingHandle.dispose();
    }
    env.simulator.addFault({ kind: "status", status: 403, errorCode: "AuthorizationFailure", match: { partition: "p1" }, count: 1 });
    expect(await client.getEntity("p1", "present").catch((e: unknown) => e)).toMatchObject({ statusCode: 403 });

    expect(await operations("query_entities", "failure")).toBe(1);
    expect(await operations("query_entities", "not_found")).toBeUndefined();
    expect(await operations("get_entity", "failure")).toBe(1);
    expect(await operations("get_entity", "not_found")).toBeUndefined();
  });
});
