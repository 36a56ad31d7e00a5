import { beforeEach, describe, expect, it } from "vitest";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { installResilience, type ResilienceHandle } from "../../src/index.js";
import { storageOperationName } from "../../src/address/storageOperation.js";
import type { RequestRecord } from "../../src/testing/simulator/requestLog.js";
import { samplesOf, sampleValue, sumOf } from "../unit/metrics/metricsTestKit.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// A scripted run of the real TableClient through the rebalancing simulator in front of Azurite:
// every counter must equal what the simulator itself counted at the wire.

const env = withTableSimulator({ seed: 11 });
let table: string;
let client: TableClient;
let registry: Registry;
let handle: ResilienceHandle | undefined;

beforeEach(async () => {
  handle?.dispose();
  env.simulator.clearFaults();
  table = uniqueTableName("metrics");
  await env.directTableClient(table).createTable();
  await env.directTableClient(table).createEntity({ partitionKey: "slow", rowKey: "r1" });
  await env.directTableClient(table).createEntity({ partitionKey: "ok", rowKey: "seed" });
  env.simulator.resetRecords();
  registry = new Registry();
  client = env.tableClient(table);
});

/** The class the policy must have given an attempt, from what the simulator did with it. */
function classAtTheWire(record: RequestRecord): string {
  switch (record.fault) {
    case "serverBusy":
      return "throttled";
    case "operationTimedOut":
    case "slow": // held back past the client's tryTimeoutInMs
      return "timeout";
    case undefined:
      return record.status !== undefined && record.status < 400 ? "success" : `status ${record.status}`;
    default:
      return `fault ${record.fault}`;
  }
}

/** attempts_total as the simulator saw it: `operation|class` -> count. */
function attemptsAtTheWire(records: readonly RequestRecord[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const record of records) {
    const operation = storageOperationName("table", { method: record.method, url: `${env.simulator.url}${record.path}` });
    const key = `${operation}|${classAtTheWire(record)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

async function attemptsInMetrics(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const sample of await samplesOf(registry, "azure_storage_attempts_total")) {
    if (sample.value > 0) counts[`${sample.labels.operation}|${sample.labels.class}`] = sample.value;
  }
  return counts;
}

describe("metrics after a scripted simulator run (real TableClient, Azurite)", () => {
  it("every counter equals what the simulator counted", async () => {
    handle = installResilience(client, {
      retry: { strategy: "fixed", maxRetries: 3, delayInMs: 10 },
      tryTimeoutInMs: 400,
      circuitBreaker: false,
      metrics: { registry },
    });
    const sim = env.simulator;
    sim.addFault({ name: "busy", kind: "serverBusy", match: { partition: "busy" }, count: 2 });
    sim.addFault({ name: "timed-out", kind: "operationTimedOut", match: { partition: "timed" }, count: 2 });
    sim.addFault({ name: "slow", kind: "slow", delayInMs: 2_000, match: { partition: "slow" }, count: 1 });
    sim.addFault({ name: "moving", kind: "serverBusy", match: { partition: "exhaust" } });

    await client.createEntity({ partitionKey: "busy", rowKey: "r1" }); // 503, 503, 204
    await client.upsertEntity({ partitionKey: "timed", rowKey: "r1" }); // 500 OperationTimedOut x2, 204
    await client.getEntity("slow", "r1"); // client-side timeout, 200
    const exhausted = await client.createEntity({ partitionKey: "exhaust", rowKey: "r1" }).catch((e: unknown) => e); // 503 x4
    expect(exhausted).toMatchObject({ statusCode: 503 });
    for (let i = 0; i < 5; i++) await client.createEntity({ partitionKey: "ok", rowKey: `r${i}` });
    await client.getEntity("ok", "seed");
    for await (const _ of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'ok'" } })) void _;
    await client.deleteEntity("ok", "r1");
    await client.submitTransaction([["create", { partitionKey: "ok", rowKey: "b1" }], ["delete", { partitionKey: "ok", rowKey: "r2" }]]);

    const records = sim.records;
    const totals = sim.totals;
    const operations = 4 + 5 + 1 + 1 + 1 + 1;
    // The script's known numbers, as the simulator counted them.
    expect(totals.faults).toEqual({ serverBusy: 2 + 4, operationTimedOut: 2, slow: 1 });
    expect(totals.requests).toBe(3 + 3 + 2 + 4 + 9);

    // Attempts, per operation and class, exactly as at the wire.
    expect(await attemptsInMetrics()).toEqual(attemptsAtTheWire(records));
    console.info(`attempts at the wire: ${JSON.stringify(attemptsAtTheWire(records))}`);
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(totals.requests);
    expect(await sumOf(registry, "azure_storage_attempts_total", { class: "throttled" })).toBe(totals.faults.serverBusy);
    expect(await sumOf(registry, "azure_storage_attempts_total", { class: "timeout" })).toBe(totals.faults.operationTimedOut! + totals.faults.slow!);
    expect(await sumOf(registry, "azure_storage_attempts_total", { class: "success" })).toBe(sim.count((r) => classAtTheWire(r) === "success"));

    // Throttles: every 503 ServerBusy the simulator sent.
    expect(await sampleValue(registry, "azure_storage_throttles_total", { service: "table", operation: "insert_entity", status: "503", error_code: "ServerBusy" })).toBe(
      sim.count({ fault: "serverBusy" }),
    );
    expect(await sumOf(registry, "azure_storage_throttles_total")).toBe(totals.faults.serverBusy);

    // Retries: one fewer than the attempts of each operation; delays observed once per retry.
    const retries = totals.requests - operations;
    expect(await sumOf(registry, "azure_storage_retries_total")).toBe(retries);
    expect(await sumOf(registry, "azure_storage_retries_total", { reason: "throttled" })).toBe(2 + 3);
    expect(await sumOf(registry, "azure_storage_retries_total", { reason: "timeout" })).toBe(2 + 1);
    expect(await sumOf(registry, "azure_storage_retry_delay_seconds_count")).toBe(retries);

    // Operations and their outcomes.
    expect(await sumOf(registry, "azure_storage_operations_total")).toBe(operations);
    expect(await sumOf(registry, "azure_storage_operations_total", { outcome: "success" })).toBe(operations - 1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "insert_entity", outcome: "failure" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "insert_entity", outcome: "success" })).toBe(1 + 5);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "upsert_entity", outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "get_entity", outcome: "success" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "query_entities", outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "delete_entity", outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "batch", outcome: "success" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_operation_duration_seconds_count")).toBe(operations);
    expect(await sumOf(registry, "azure_storage_retries_exhausted_total")).toBe(1);
    expect(await sampleValue(registry, "azure_storage_retries_exhausted_total", { service: "table", operation: "insert_entity", class: "throttled" })).toBe(1);

    // No breaker here: nothing refused, no circuit series.
    expect(await sumOf(registry, "azure_storage_circuit_rejections_total")).toBe(0);
    expect(await samplesOf(registry, "azure_storage_circuit_breakers")).toEqual([]);
  }, 60_000);

  it("with the breaker: attempts at the wire still match, refused ones are circuit_open, transitions match the breaker", async () => {
    handle = installResilience(client, {
      // Retries 100 ms apart: the 4th failure in a row comes after the partition has served nothing for 250 ms.
      retry: { strategy: "fixed", maxRetries: 8, delayInMs: 100 },
      circuitBreaker: { consecutiveFailures: 4, resetTimeoutInMs: 60_000 },
      caller: { failFast: true },
      metrics: { registry },
    });
    const transitions: string[] = [];
    handle.circuitBreaker?.onTransition((t) => transitions.push(t.to));
    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { partition: "hot" } });

    const first = await client.createEntity({ partitionKey: "hot", rowKey: "r1" }).catch((e: unknown) => e);
    expect(first).toMatchObject({ statusCode: 503 });
    for (let i = 2; i <= 4; i++) await client.createEntity({ partitionKey: "hot", rowKey: `r${i}` }).catch(() => undefined);
    await client.createEntity({ partitionKey: "ok", rowKey: "c1" });

    const sim = env.simulator;
    const refused = 1 + 3; // the attempt that met the circuit it had just opened, then three operations refused at once
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(sim.totals.requests + refused);
    expect(await sumOf(registry, "azure_storage_attempts_total", { class: "throttled" })).toBe(sim.count({ fault: "serverBusy" }));
    expect(await sumOf(registry, "azure_storage_throttles_total")).toBe(sim.count({ fault: "serverBusy" }));
    expect(await sumOf(registry, "azure_storage_attempts_total", { class: "circuit_open" })).toBe(refused);
    expect(await sumOf(registry, "azure_storage_circuit_rejections_total")).toBe(refused);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "insert_entity", outcome: "circuit_open" })).toBe(4);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "insert_entity", outcome: "success" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_circuit_transitions_total")).toBe(transitions.length);
    expect(await sampleValue(registry, "azure_storage_circuit_transitions_total", { service: "table", to: "open" })).toBe(transitions.filter((t) => t === "open").length);
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "open" })).toBe(handle.circuitBreaker?.stateCounts().open);
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "open" })).toBe(1);
  }, 60_000);
});
