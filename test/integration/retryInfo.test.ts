import { beforeEach, describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from "@azure/data-tables";
import { BlobServiceClient, StorageSharedKeyCredential as BlobCredential, type ContainerClient } from "@azure/storage-blob";
import { QueueServiceClient, StorageSharedKeyCredential as QueueCredential, type QueueClient } from "@azure/storage-queue";
import type { PipelineResponse } from "@azure/core-rest-pipeline";
import { getRetryInfo, installResilience, isCircuitOpenError, type InstallResilienceOptions } from "../../src/index.js";
import type { RebalancingSimulator } from "../../src/testing/simulator/rebalancingSimulator.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";

// getRetryInfo from what each real SDK client hands its caller, against Azurite behind the
// rebalancing simulator: on Tables the raw response of the `onResponse` operation option, on
// Blob and Queue a result's `_response` (neither SDK takes `onResponse` in its operations'
// options), and on all three the error: the SDK's RestError and the package's own
// CircuitOpenError. Nothing here depends on the Node version.

const fast: InstallResilienceOptions = { retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20 }, metrics: false };
const once = { attempts: 1, classes: ["success"], stopReason: "success", possiblyApplied: false };
const afterThrottle = { attempts: 2, classes: ["throttled", "success"], stopReason: "success", possiblyApplied: false };
const permanent = { attempts: 1, classes: ["permanent"], stopReason: "permanent" };

/**
 * Options under which a partition that answers nothing but 503 opens its circuit after three
 * attempts, and a caller that may not wait is refused at once: pacing off, so the refusal is
 * the circuit's and not a paced queue's.
 */
const failFastBreaker: InstallResilienceOptions = {
  retry: { strategy: "fixed", maxRetries: 20, delayInMs: 60 },
  circuitBreaker: { consecutiveFailures: 3, pacing: false },
  caller: { failFast: true },
  metrics: false,
};

/**
 * Sends `read` to a partition the simulator keeps answering 503 until its circuit opens, then
 * once more: the second call must be refused before anything reaches the simulator. Answers
 * what that call threw.
 */
async function refusedByOpenCircuit(simulator: RebalancingSimulator, read: () => Promise<unknown>): Promise<unknown> {
  const opener = await read().then(() => undefined, (e: unknown) => e);
  expect(getRetryInfo(opener)?.stopReason).toBe("circuit-open");
  const sent = simulator.records.length;
  const refused = await read().then(() => undefined, (e: unknown) => e);
  expect(simulator.records).toHaveLength(sent);
  return refused;
}

/** An `onResponse` that keeps every raw response it hears. */
function hearing(): { onResponse: (response: PipelineResponse) => void; heard: PipelineResponse[] } {
  const heard: PipelineResponse[] = [];
  return { heard, onResponse: (response) => void heard.push(response) };
}

describe("Tables: getRetryInfo from onResponse's raw response and from the error", () => {
  const env = withTableSimulator({ seed: 29 });
  let table: string;
  let client: TableClient;

  beforeEach(async () => {
    env.simulator.clearFaults();
    table = uniqueTableName("info");
    await env.directTableClient(table).createTable();
    env.simulator.resetRecords();
    client = env.tableClient(table);
  });

  it("answers on each operation's raw response, one of them after a 503", async () => {
    installResilience(client, fast);
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1", method: "PUT" }, count: 1 });
    const created = hearing();
    const upserted = hearing();
    const read = hearing();
    const deleted = hearing();
    await client.createEntity({ partitionKey: "p1", rowKey: "r1", value: 1 }, created);
    await client.upsertEntity({ partitionKey: "p1", rowKey: "r1", value: 2 }, "Replace", upserted);
    const entity = await client.getEntity<{ value: number }>("p1", "r1", read);
    await client.deleteEntity("p1", "r1", deleted);
    expect(entity.value).toBe(2);
    expect(getRetryInfo(created.heard[0])).toMatchObject(once);
    expect(getRetryInfo(upserted.heard[0])).toMatchObject(afterThrottle);
    expect(getRetryInfo(read.heard[0])).toMatchObject(once);
    expect(getRetryInfo(deleted.heard[0])).toMatchObject(once);
    expect([created, upserted, read, deleted].map((ear) => ear.heard.length)).toEqual([1, 1, 1, 1]);
    expect(env.simulator.count({ partition: "p1" })).toBe(5);
  });

  it("answers on each page of listEntities, on createTable, and on a TableServiceClient's getProperties", async () => {
    installResilience(client, fast);
    await env.directTableClient(table).createEntity({ partitionKey: "p2", rowKey: "a" });
    await env.directTableClient(table).createEntity({ partitionKey: "p2", rowKey: "b" });
    const pages = hearing();
    const rows = [];
    for await (const page of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p2'" }, onResponse: pages.onResponse }).byPage({ maxPageSize: 1 })) {
      rows.push(...page.map((entity) => entity.rowKey));
    }
    expect(rows).toEqual(["a", "b"]);
    expect(pages.heard.length).toBeGreaterThanOrEqual(2);
    for (const raw of pages.heard) expect(getRetryInfo(raw)).toMatchObject(once);

    const another = env.tableClient(uniqueTableName("info"));
    installResilience(another, fast);
    const created = hearing();
    await another.createTable(created);
    expect(getRetryInfo(created.heard[0])).toMatchObject(once);

    const credential = new AzureNamedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
    const service = new TableServiceClient(env.proxyTableUrl, credential, { allowInsecureConnection: true });
    installResilience(service, fast);
    const properties = hearing();
    await service.getProperties(properties);
    expect(getRetryInfo(properties.heard[0])).toMatchObject(once);
  });

  it("answers on the SDK's RestError: a missing entity, a conflict inside a transaction's 202", async () => {
    installResilience(client, fast);
    const missing = await client.getEntity("p3", "nowhere").then(() => undefined, (e: unknown) => e);
    expect(missing).toMatchObject({ name: "RestError", statusCode: 404 });
    expect(getRetryInfo(missing)).toMatchObject(permanent);

    await env.directTableClient(table).createEntity({ partitionKey: "p3", rowKey: "b" });
    const conflict = await client
      .submitTransaction([
        ["create", { partitionKey: "p3", rowKey: "a" }],
        ["create", { partitionKey: "p3", rowKey: "b" }],
      ])
      .then(() => undefined, (e: unknown) => e);
    expect(conflict).toMatchObject({ name: "RestError", statusCode: 409 });
    expect(getRetryInfo(conflict)).toMatchObject(permanent);
  });

  it("answers on the package's own error: a CircuitOpenError, which sent nothing", async () => {
    const handle = installResilience(client, failFastBreaker);
    try {
      env.simulator.addFault({ kind: "serverBusy", match: { partition: "down" } });
      const refused = await refusedByOpenCircuit(env.simulator, () => client.getEntity("down", "r1"));
      expect(refused).toSatisfy(isCircuitOpenError);
      expect(getRetryInfo(refused)).toMatchObject({ attempts: 1, classes: ["circuit_open"], stopReason: "circuit-open" });
      expect(getRetryInfo(refused)?.retryAfterInMs).toBeGreaterThan(0);
    } finally {
      handle.dispose();
    }
  });

  it("leaves the client as the SDK made it: its methods are the class's, and a result it built afresh carries no record", async () => {
    const ownBefore = Reflect.ownKeys(client);
    installResilience(client, fast);
    expect(Reflect.ownKeys(client)).toEqual(ownBefore);
    expect(client.getEntity).toBe(TableClient.prototype.getEntity);
    expect(client.submitTransaction).toBe(TableClient.prototype.submitTransaction);
    const written = await client.upsertEntity({ partitionKey: "p4", rowKey: "r1" });
    const entity = await client.getEntity("p4", "r1");
    const transaction = await client.submitTransaction([["upsert", { partitionKey: "p4", rowKey: "r2" }]]);
    expect(transaction.status).toBe(202);
    expect([getRetryInfo(written), getRetryInfo(entity), getRetryInfo(transaction)]).toEqual([undefined, undefined, undefined]);
  });
});

describe("Blob: getRetryInfo from a result's _response and from the error", () => {
  const env = withStorageSimulator("blob", { seed: 29 });
  let container: ContainerClient;

  beforeEach(async () => {
    env.simulator.clearFaults();
    const name = uniqueStorageName("info");
    const credential = new BlobCredential(env.azurite.accountName, env.azurite.accountKey);
    await new BlobServiceClient(env.directUrl, credential).getContainerClient(name).create();
    env.simulator.resetRecords();
    container = new BlobServiceClient(env.proxyUrl, credential).getContainerClient(name);
  });

  it("answers on _response (and the result) after a 503, and at first try", async () => {
    installResilience(container, fast);
    const blob = container.getBlockBlobClient("info.txt");
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "info.txt", method: "PUT" }, count: 1 });
    const uploaded = await blob.upload("hello", 5);
    expect(getRetryInfo(uploaded._response)).toMatchObject(afterThrottle);
    expect(getRetryInfo(uploaded)).toMatchObject(afterThrottle);
    const properties = await blob.getProperties();
    expect(getRetryInfo(properties._response)).toMatchObject(once);
  });

  it("answers on the SDK's RestError and on a CircuitOpenError", async () => {
    installResilience(container, fast);
    const missing = await container.getBlobClient("missing.txt").getProperties().then(() => undefined, (e: unknown) => e);
    expect(missing).toMatchObject({ name: "RestError", statusCode: 404 });
    expect(getRetryInfo(missing)).toMatchObject(permanent);

    const handle = installResilience(container, failFastBreaker);
    try {
      env.simulator.addFault({ kind: "serverBusy", match: { partition: "down.txt" } });
      const refused = await refusedByOpenCircuit(env.simulator, () => container.getBlobClient("down.txt").getProperties());
      expect(refused).toSatisfy(isCircuitOpenError);
      expect(getRetryInfo(refused)).toMatchObject({ attempts: 1, classes: ["circuit_open"], stopReason: "circuit-open" });
    } finally {
      handle.dispose();
    }
  });
});

describe("Queue: getRetryInfo from a result's _response and from the error", () => {
  const env = withStorageSimulator("queue", { seed: 29 });
  let name: string;
  let queue: QueueClient;

  beforeEach(async () => {
    env.simulator.clearFaults();
    name = uniqueStorageName("info");
    const credential = new QueueCredential(env.azurite.accountName, env.azurite.accountKey);
    await new QueueServiceClient(env.directUrl, credential).getQueueClient(name).create();
    env.simulator.resetRecords();
    queue = new QueueServiceClient(env.proxyUrl, credential).getQueueClient(name);
  });

  it("answers on _response (and the result) after a 503, and at first try", async () => {
    installResilience(queue, fast);
    env.simulator.addFault({ kind: "serverBusy", match: { resource: name, method: "POST" }, count: 1 });
    const sent = await queue.sendMessage("order 29");
    expect(getRetryInfo(sent._response)).toMatchObject(afterThrottle);
    expect(getRetryInfo(sent)).toMatchObject(afterThrottle);
    const received = await queue.receiveMessages();
    expect(received.receivedMessageItems.map((message) => message.messageText)).toEqual(["order 29"]);
    expect(getRetryInfo(received._response)).toMatchObject(once);
  });

  it("answers on the SDK's RestError and on a CircuitOpenError", async () => {
    installResilience(queue, fast);
    const credential = new QueueCredential(env.azurite.accountName, env.azurite.accountKey);
    const missingQueue = new QueueServiceClient(env.proxyUrl, credential).getQueueClient(`${name}-missing`);
    installResilience(missingQueue, fast);
    const missing = await missingQueue.getProperties().then(() => undefined, (e: unknown) => e);
    expect(missing).toMatchObject({ name: "RestError", statusCode: 404 });
    expect(getRetryInfo(missing)).toMatchObject(permanent);

    const handle = installResilience(queue, failFastBreaker);
    try {
      env.simulator.addFault({ kind: "serverBusy", match: { resource: name } });
      const refused = await refusedByOpenCircuit(env.simulator, () => queue.peekMessages());
      expect(refused).toSatisfy(isCircuitOpenError);
      expect(getRetryInfo(refused)).toMatchObject({ attempts: 1, classes: ["circuit_open"], stopReason: "circuit-open" });
    } finally {
      handle.dispose();
    }
  });
});
