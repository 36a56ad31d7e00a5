import { afterEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createPipelineFromOptions, createPipelineRequest, type HttpClient } from "@azure/core-rest-pipeline";
import { Registry, register } from "prom-client";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
import { fixedBackoff, installResilience, isCircuitOpenError, type ResilienceHandle } from "../../../src/index.js";
import { sampleValue, samplesOf, sumOf } from "./metricsTestKit.js";
import { hotPartitionHttpClient } from "../../support/hotPartitionHttpClient.js";

function tableClient(http: HttpClient, table = "orders"): TableClient {
  const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
  return new TableClient("https://myaccount.table.core.windows.net", table, credential, { httpClient: http });
}

const handles: ResilienceHandle[] = [];
function install(...args: Parameters<typeof installResilience>): ResilienceHandle {
  const handle = installResilience(...args);
  handles.push(handle);
  return handle;
}
afterEach(() => {
  for (const handle of handles.splice(0)) handle.dispose();
  vi.useRealTimers();
});

describe("installResilience: metrics", () => {
  it("two clients and a queue pipeline on one registry: no error, series told apart by service and operation", async () => {
    const registry = new Registry();
    const http = hotPartitionHttpClient();
    const orders = tableClient(http, "orders");
    const invoices = tableClient(http, "invoices");
    install(orders, { metrics: { registry }, circuitBreaker: false });
    install(invoices, { metrics: { registry }, circuitBreaker: false });
    const queuePipeline = createPipelineFromOptions({});
    install(queuePipeline, { service: "queue", metrics: { registry }, circuitBreaker: false });

    await orders.upsertEntity({ partitionKey: "p", rowKey: "1" });
    await invoices.upsertEntity({ partitionKey: "p", rowKey: "2" });
    await invoices.deleteEntity("p", "2");
    const send = createPipelineRequest({ url: "https://myaccount.queue.core.windows.net/jobs/messages", method: "POST" });
    await queuePipeline.sendRequest(http, send);

    const ops = "azure_storage_operations_total";
    expect(await sampleValue(registry, ops, { service: "table", operation: "upsert_entity", outcome: "success" })).toBe(2);
    expect(await sampleValue(registry, ops, { service: "table", operation: "delete_entity", outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, ops, { service: "queue", operation: "send_message", outcome: "success" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(4);
  });

  it("installing twice on one client reuses the families and keeps counting in the same series", async () => {
    const registry = new Registry();
    const client = tableClient(hotPartitionHttpClient());
    install(client, { metrics: { registry }, circuitBreaker: false });
    await client.upsertEntity({ partitionKey: "p", rowKey: "1" });
    install(client, { metrics: { registry }, circuitBreaker: false });
    await client.upsertEntity({ partitionKey: "p", rowKey: "1" });
    expect(await sampleValue(registry, "azure_storage_attempts_total", { service: "table", operation: "upsert_entity", class: "success" })).toBe(2);
  });

  it("defaults to prom-client's default registry, and false turns metrics off", async () => {
    register.clear();
    const handle = install(tableClient(hotPartitionHttpClient()), { circuitBreaker: false });
    expect(handle.metrics?.service).toBe("table");
    expect(register.getSingleMetric("azure_storage_operations_total")).toBeDefined();
    register.clear();
    const off = install(tableClient(hotPartitionHttpClient()), { metrics: false, circuitBreaker: false });
    expect(off.metrics).toBeUndefined();
    expect(await register.metrics()).not.toContain("azure_storage");
  });

  it("rejects bad metrics options by name", () => {
    expect(() => install(tableClient(hotPartitionHttpClient()), { metrics: { prefix: "9bad" } })).toThrow(/metrics.prefix must match/);
    expect(() => install(tableClient(hotPartitionHttpClient()), { metrics: "on" as never })).toThrow(/metrics must be an object; got "on"/);
  });

  it("reports the breaker: gauge by state, transitions, rejections; dispose() removes the gauge source", async () => {
    vi.useFakeTimers();
    const registry = new Registry();
    const http = hotPartitionHttpClient();
    const client = tableClient(http);
    // Retries 100 ms apart: the 5th failure in a row comes after the partition has served nothing for 250 ms.
    const handle = install(client, {
      metrics: { registry },
      retry: fixedBackoff({ maxRetries: 12, delayInMs: 100 }),
      // A probe period longer than the second the test waits: the circuit is still open when scraped.
      circuitBreaker: { consecutiveFailures: 5, resetTimeoutInMs: 3_000 },
      caller: { failFast: true },
    });
    const first = expect(client.upsertEntity({ partitionKey: "hot", rowKey: "r" })).rejects.toMatchObject({ statusCode: 503 });
    await vi.advanceTimersByTimeAsync(1_000);
    await first;
    await expect(client.upsertEntity({ partitionKey: "hot", rowKey: "r2" })).rejects.toSatisfy(isCircuitOpenError);
    await client.upsertEntity({ partitionKey: "cool", rowKey: "r" });

    const upsert = { service: "table", operation: "upsert_entity" };
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "open" })).toBe(1);
    // "cool" only ever succeeded: it has no circuit, so it is not counted as closed.
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "closed" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_circuit_transitions_total", { service: "table", to: "open" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...upsert, class: "throttled" })).toBe(http.requests.length - 1);
    // First operation: 5 throttled attempts then refused by the circuit it opened; second: refused at once.
    expect(await sampleValue(registry, "azure_storage_circuit_rejections_total", upsert)).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...upsert, outcome: "circuit_open" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...upsert, outcome: "success" })).toBe(1);

    // The breaker's pacing is reported through the same subscription, read from it at scrape time.
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" })).toBe(handle.circuitBreaker?.pacedScopes().length);

    handle.dispose();
    expect(await samplesOf(registry, "azure_storage_circuit_breakers")).toEqual([]);
    expect(await samplesOf(registry, "azure_storage_paced_partitions")).toEqual([]);
  });
});
