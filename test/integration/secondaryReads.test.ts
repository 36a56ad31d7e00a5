import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PipelineResponse } from "@azure/core-rest-pipeline";
import { odata, type TableClient } from "@azure/data-tables";
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { Registry } from "prom-client";
import { getRetryInfo, installResilience, type ResilienceHandle } from "../../src/index.js";
import type { SimulatedRequestInfo } from "../../src/testing/simulator/faultRule.js";
import type { RequestRecord } from "../../src/testing/simulator/requestLog.js";
import { sumOf } from "../unit/metrics/metricsTestKit.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";

// Issue 18 item 5, on real components: real SDK clients through the rebalancing simulator in
// front of Azurite, which serves every service's secondary as the account `devstoreaccount1-secondary`
// in path-style URLs (the same store: no lag). A partition goes offline on the primary only
// (Azure's secondary is another region): reads go to the secondary, writes never do. Azurite
// checking the SharedKey signature on the secondary requests is part of what is tested: the
// Tables SDK signs before the Retry phase, so the secondary request carries the primary's signature.

const SECONDARY_PATH = "/devstoreaccount1-secondary/";
/** The simulator scopes both locations alike (the account without -secondary): faults must say which one they hit. */
const onPrimary = (request: SimulatedRequestInfo): boolean => !request.path.startsWith(SECONDARY_PATH);
const onSecondary = (record: RequestRecord): boolean => record.path.startsWith(SECONDARY_PATH);

describe("secondary reads on a real TableClient", () => {
  const env = withTableSimulator({ seed: 18 });
  let table: string;
  let client: TableClient;
  let registry: Registry;
  let handle: ResilienceHandle | undefined;

  beforeEach(async () => {
    env.simulator.clearFaults();
    table = uniqueTableName("sec");
    const direct = env.directTableClient(table);
    await direct.createTable();
    await direct.createEntity({ partitionKey: "p", rowKey: "r1", value: "from the store" });
    await direct.createEntity({ partitionKey: "p", rowKey: "r2", value: "also stored" });
    env.simulator.resetRecords();
    registry = new Registry();
    client = env.tableClient(table);
  });

  afterEach(() => {
    handle?.dispose();
  });

  it("a point read the primary answers 503 ServerBusy is served by the secondary, which accepts the primary's signature", async () => {
    handle = installResilience(client, { secondaryReads: true, retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20 }, metrics: { registry } });
    env.simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "p", predicate: onPrimary } });
    let raw: PipelineResponse | undefined;
    const entity = await client.getEntity<{ value: string }>("p", "r1", { onResponse: (response) => (raw = response) });

    expect(entity.value).toBe("from the store");
    const records = env.simulator.records;
    expect(records.map((r) => [onSecondary(r) ? "secondary" : "primary", r.method, r.status])).toEqual([
      ["primary", "GET", 503],
      ["secondary", "GET", 200],
    ]);
    // Forwarded to Azurite and answered 200 there: its SharedKeyLite check passed on the -secondary path.
    expect(records[1]?.forwarded).toBe(true);
    expect(getRetryInfo(raw)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], secondaryAttempts: 1, answeredBySecondary: true });
    expect(await sumOf(registry, "azure_storage_secondary_reads_total", { service: "table", outcome: "success" })).toBe(1);
  });

  it("an open circuit sends reads and queries straight to the secondary; writes wait for the primary and never go there", async () => {
    handle = installResilience(client, {
      secondaryReads: true,
      retry: { strategy: "fixed", maxRetries: 6, delayInMs: 60 },
      circuitBreaker: { consecutiveFailures: 3, resetTimeoutInMs: 30_000 },
      caller: { failFast: true },
      metrics: { registry },
    });
    env.simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "p", predicate: onPrimary } });
    // A write retries on the primary only, until the partition's circuit opens and ends it.
    await expect(client.upsertEntity({ partitionKey: "p", rowKey: "w", value: 1 })).rejects.toMatchObject({ statusCode: 503 });
    expect(handle.partitionStatus(table, "p").state).toBe("open");
    const writeRecords = env.simulator.records;
    expect(writeRecords.length).toBeGreaterThanOrEqual(3);
    expect(writeRecords.some(onSecondary)).toBe(false);

    env.simulator.resetRecords();
    const entity = await client.getEntity<{ value: string }>("p", "r1");
    const queried: string[] = [];
    for await (const e of client.listEntities<{ value: string }>({ queryOptions: { filter: odata`PartitionKey eq ${"p"}` } })) queried.push(e.rowKey as string);

    expect(entity.value).toBe("from the store");
    expect(queried.sort()).toEqual(["r1", "r2"]);
    // Nothing reached the primary: the open circuit kept the reads off it, and they were answered by the secondary.
    const readRecords = env.simulator.records;
    expect(readRecords.map((r) => [onSecondary(r), r.method, r.status])).toEqual([
      [true, "GET", 200],
      [true, "GET", 200],
    ]);
    // The breaker learnt nothing from the secondary: the primary's circuit is still open.
    expect(handle.partitionStatus(table, "p").state).toBe("open");
    expect(await sumOf(registry, "azure_storage_secondary_reads_total", { outcome: "success" })).toBe(2);

    // A write still goes to the primary only: refused by the open circuit, not sent anywhere.
    env.simulator.resetRecords();
    await expect(client.updateEntity({ partitionKey: "p", rowKey: "r1", value: "changed" })).rejects.toThrow();
    expect(env.simulator.records.some(onSecondary)).toBe(false);
  });

  it("without secondaryReads the primary is all there is", async () => {
    handle = installResilience(client, { retry: { strategy: "fixed", maxRetries: 2, delayInMs: 20 }, circuitBreaker: false, metrics: false });
    env.simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "p", predicate: onPrimary } });
    await expect(client.getEntity("p", "r1")).rejects.toMatchObject({ statusCode: 503 });
    expect(env.simulator.records.map((r) => onSecondary(r))).toEqual([false, false, false]);
  });
});

describe("secondary reads on a real BlobClient", () => {
  const env = withStorageSimulator("blob", { seed: 18 });
  const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
  let container: string;

  beforeEach(async () => {
    env.simulator.clearFaults();
    container = uniqueStorageName("sec");
    const direct = new BlobServiceClient(env.directUrl, credential()).getContainerClient(container);
    await direct.create();
    await direct.getBlockBlobClient("a.txt").upload(Buffer.from("stored"), 6);
    env.simulator.resetRecords();
  });

  it("download (GET) and getProperties (HEAD) are served by the secondary, signed there after the Retry phase; an upload never goes there", async () => {
    const blob = new BlobServiceClient(env.proxyUrl, credential()).getContainerClient(container).getBlockBlobClient("a.txt");
    const handle = installResilience(blob, { secondaryReads: true, retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20 }, circuitBreaker: false, metrics: false });
    try {
      env.simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "a.txt", predicate: onPrimary } });
      const downloaded = await blob.downloadToBuffer();
      const properties = await blob.getProperties();
      expect(downloaded.toString("utf8")).toBe("stored");
      expect(properties.contentLength).toBe(6);
      expect(getRetryInfo(properties)).toMatchObject({ answeredBySecondary: true, secondaryAttempts: 1 });
      const secondary = env.simulator.records.filter(onSecondary);
      // downloadToBuffer reads the properties (HEAD), then the range (GET); then getProperties (HEAD).
      expect(secondary.map((r) => [r.method, r.status])).toEqual([
        ["HEAD", 200],
        ["GET", 206],
        ["HEAD", 200],
      ]);

      env.simulator.resetRecords();
      await expect(blob.upload(Buffer.from("new"), 3)).rejects.toMatchObject({ statusCode: 503 });
      expect(env.simulator.records.length).toBe(4);
      expect(env.simulator.records.some(onSecondary)).toBe(false);
    } finally {
      handle.dispose();
    }
  });
});
