import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isRestError, type PipelineResponse } from "@azure/core-rest-pipeline";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { getRetryInfo, installResilience, type ResilienceHandle, type RetryEvent } from "../../src/index.js";
import { sampleValue, sumOf } from "../unit/metrics/metricsTestKit.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// Issue 18 item 1, on real components: the Tables SDK's submitTransaction through the
// rebalancing simulator in front of Azurite. The simulator answers a transaction 202 with a
// failed changeset inside (as Azure does, "even if one of the operations in the change set
// fails"); Azurite answers a real conflict the same way.

const env = withTableSimulator({ seed: 18 });
let table: string;
let client: TableClient;
let registry: Registry;
let handle: ResilienceHandle | undefined;
let retries: RetryEvent[];

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("txn");
  await env.directTableClient(table).createTable();
  env.simulator.resetRecords();
  registry = new Registry();
  retries = [];
  client = env.tableClient(table);
  handle = installResilience(client, {
    retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20 },
    maxRetryAfterInMs: 5_000,
    metrics: { registry },
    observers: [{ onRetry: (event) => retries.push(event) }],
  });
});

afterEach(() => {
  handle?.dispose();
});

/** Entities of the table, read from Azurite directly. */
async function stored(partitionKey: string): Promise<string[]> {
  const rows: string[] = [];
  for await (const entity of env.directTableClient(table).listEntities({ queryOptions: { filter: `PartitionKey eq '${partitionKey}'` } })) rows.push(entity.rowKey as string);
  return rows.sort();
}

describe("submitTransaction answered 202 with a failed changeset (real TableClient, simulator, Azurite)", () => {
  it("ServerBusy inside, twice: the whole batch is sent again after the changeset's hint, and applied once", async () => {
    env.simulator.addFault({ name: "busy-changeset", kind: "failChangeset", status: 503, errorCode: "ServerBusy", retryAfter: { ms: 150 }, count: 2 });
    const result = await client.submitTransaction([
      ["create", { partitionKey: "p1", rowKey: "a", n: 1 }],
      ["create", { partitionKey: "p1", rowKey: "b", n: 2 }],
    ]);
    expect(result.status).toBe(202);
    expect(result.subResponses.map((r) => r.status)).toEqual([204, 204]);
    expect(await stored("p1")).toEqual(["a", "b"]);
    // Three transactions at the wire: two faulted (not forwarded), the third applied.
    expect(env.simulator.count({ path: `/${env.azurite.accountName}/$batch` })).toBe(3);
    expect(env.simulator.count({ fault: "failChangeset", forwarded: false, status: 202 })).toBe(2);
    expect(retries.map((r) => [r.reason, r.status, r.errorCode, r.delaySource, r.delayInMs])).toEqual([
      ["throttled", 503, "ServerBusy", "retry-after", 150],
      ["throttled", 503, "ServerBusy", "retry-after", 150],
    ]);
    expect(await sampleValue(registry, "azure_storage_batch_changeset_failures_total", { service: "table", class: "throttled" })).toBe(2);
    expect(await sumOf(registry, "azure_storage_retries_total", { operation: "batch", reason: "throttled" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "batch", outcome: "success" })).toBe(1);
  });

  it("Cosmos DB's 429 and an OperationTimedOut inside are retried too", async () => {
    env.simulator.addFault({ kind: "failChangeset", status: 429, errorCode: "TooManyRequests", retryAfter: { seconds: 1, header: "Retry-After" }, count: 1 });
    env.simulator.addFault({ kind: "failChangeset", status: 500, errorCode: "OperationTimedOut", count: 1 });
    await client.submitTransaction([["upsert", { partitionKey: "p2", rowKey: "a" }]]);
    expect(await stored("p2")).toEqual(["a"]);
    expect(retries.map((r) => [r.reason, r.status, r.delaySource])).toEqual([
      ["throttled", 429, "retry-after"],
      ["timeout", 500, "backoff"],
    ]);
    expect(retries[0]?.delayInMs).toBe(1000);
    expect(await sampleValue(registry, "azure_storage_batch_changeset_failures_total", { service: "table", class: "timeout" })).toBe(1);
  });

  it("a real conflict inside (Azurite's own 202): never retried, the SDK throws 409 as without the package", async () => {
    await env.directTableClient(table).createEntity({ partitionKey: "p3", rowKey: "b" });
    env.simulator.resetRecords();
    const error = await client
      .submitTransaction([
        ["create", { partitionKey: "p3", rowKey: "a" }],
        ["create", { partitionKey: "p3", rowKey: "b" }],
      ])
      .then(() => undefined, (e: unknown) => e);
    expect(isRestError(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 409, code: "EntityAlreadyExists" });
    expect(env.simulator.count({ forwarded: true })).toBe(1);
    expect(retries).toEqual([]);
    // Atomic: the first insert was rolled back with the second.
    expect(await stored("p3")).toEqual(["b"]);
    const info = getRetryInfo((error as { response?: PipelineResponse }).response);
    expect(info).toMatchObject({ attempts: 1, classes: ["permanent"], stopReason: "permanent", possiblyApplied: false });
    expect(await sampleValue(registry, "azure_storage_batch_changeset_failures_total", { service: "table", class: "permanent" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "batch", outcome: "failure" })).toBe(1);
  });

  it("a changeset that keeps failing: after the retries the SDK throws the changeset's 503 ServerBusy", async () => {
    env.simulator.addFault({ kind: "failChangeset" });
    const error = await client.submitTransaction([["create", { partitionKey: "p4", rowKey: "a" }]]).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ statusCode: 503, code: "ServerBusy" });
    expect(env.simulator.count({ fault: "failChangeset" })).toBe(4);
    expect(await stored("p4")).toEqual([]);
    expect(await sampleValue(registry, "azure_storage_retries_exhausted_total", { service: "table", operation: "batch", class: "throttled" })).toBe(1);
  });
});
