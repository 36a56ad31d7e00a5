import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from "@azure/data-tables";
import { getRetryInfo, installResilience, type ResilienceHandle } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// getRetryInfo on what a real TableClient answers (an entity, a write's headers, a
// transaction's result), against Azurite behind the simulator: the SDK builds each afresh,
// and the install marks it with its operation's record.

const env = withTableSimulator({ seed: 24 });
let table: string;
let client: TableClient;
let handle: ResilienceHandle | undefined;

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("info");
  await env.directTableClient(table).createTable();
  env.simulator.resetRecords();
  client = env.tableClient(table);
  handle = installResilience(client, { retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20 }, metrics: false });
});

afterEach(() => {
  handle?.dispose();
});

describe("getRetryInfo on a real TableClient's results (Azurite)", () => {
  it("answers on createEntity, upsertEntity, getEntity and deleteEntity, one of them after a 503", async () => {
    const created = await client.createEntity({ partitionKey: "p1", rowKey: "r1", value: 1 });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1", method: "PUT" }, count: 1 });
    const upserted = await client.upsertEntity({ partitionKey: "p1", rowKey: "r1", value: 2 }, "Replace");
    const entity = await client.getEntity<{ value: number }>("p1", "r1");
    const plain = await env.directTableClient(table).getEntity("p1", "r1");
    const deleted = await client.deleteEntity("p1", "r1");
    expect(getRetryInfo(created)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
    expect(getRetryInfo(upserted)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], stopReason: "success", possiblyApplied: false });
    expect(getRetryInfo(entity)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
    expect(getRetryInfo(deleted)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
    expect(entity.value).toBe(2);
    expect(Object.keys(entity)).toEqual(Object.keys(plain));
    // JSON as the SDK made it; odata.metadata names the endpoint, which differs (simulator, Azurite).
    const withoutEndpoint = (value: object): string => JSON.stringify({ ...value, "odata.metadata": undefined });
    expect(withoutEndpoint(entity)).toBe(withoutEndpoint(plain));
    expect(Object.getOwnPropertySymbols({ ...entity })).toEqual([]);
    expect(env.simulator.count({ partition: "p1" })).toBe(5);
  });

  it("answers on submitTransaction's result after a 503, and on listEntities' pages", async () => {
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p2", method: "POST" }, count: 1 });
    const result = await client.submitTransaction([
      ["create", { partitionKey: "p2", rowKey: "a" }],
      ["create", { partitionKey: "p2", rowKey: "b" }],
    ]);
    expect(result.status).toBe(202);
    // Node 22 has no async context frames: there a transaction's result carries no record (src/install/tableResultInfo.ts).
    if (Number(process.versions.node.split(".")[0]) >= 24) {
      expect(getRetryInfo(result)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], stopReason: "success" });
    } else {
      expect(getRetryInfo(result)).toBeUndefined();
    }
    const pages = [];
    for await (const page of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p2'" } }).byPage({ maxPageSize: 1 })) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([1, 1]);
    for (const page of pages) expect(getRetryInfo(page)).toMatchObject({ attempts: 1, stopReason: "success" });
  });

  it("dispose puts the SDK's methods back: results carry no record", async () => {
    handle?.dispose();
    handle = undefined;
    expect(client.getEntity).toBe(TableClient.prototype.getEntity);
    const created = await client.createEntity({ partitionKey: "p3", rowKey: "r1" });
    expect(getRetryInfo(created)).toBeUndefined();
  });

  it("answers on a TableServiceClient's getProperties; its createTable answers undefined, untouched", async () => {
    const credential = new AzureNamedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
    const service = new TableServiceClient(env.proxyTableUrl, credential, { allowInsecureConnection: true });
    const serviceHandle = installResilience(service, { retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20 }, metrics: false });
    try {
      const properties = await service.getProperties();
      expect(getRetryInfo(properties)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
      await expect(service.createTable(uniqueTableName("svc"))).resolves.toBeUndefined();
    } finally {
      serviceHandle.dispose();
    }
    expect(Object.hasOwn(service, "getProperties")).toBe(false);
  });
});
