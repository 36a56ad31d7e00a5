import { AzureNamedKeyCredential, AzureSASCredential, TableClient, generateTableSas } from "@azure/data-tables";
import { isRestError, type PipelineResponse } from "@azure/core-rest-pipeline";
import { Registry } from "prom-client";
import { beforeEach, describe, expect, it } from "vitest";
import { getRetryInfo, installResilience, isPossiblyApplied, type AmbiguousWriteEvent, type InstallResilienceOptions } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// Writes whose first attempt reached Azurite but whose answer was lost (reset after the
// store applied it, or held back past our per-attempt timeout): the retry then sees 409, 404
// or 412, and the policy reads the entity back through the client's own signed pipeline.

const env = withTableSimulator({ seed: 11 });
let table: string;
let client: TableClient;
let direct: TableClient;
let events: AmbiguousWriteEvent[];

const fast = { strategy: "fixed", maxRetries: 4, delayInMs: 20 } as const;

function install(target: TableClient, options: InstallResilienceOptions = {}) {
  return installResilience(target, {
    retry: fast,
    circuitBreaker: false,
    metrics: false,
    observers: [{ onAmbiguousWrite: (event) => events.push(event) }],
    ...options,
  });
}

/** Captures the raw response the SDK got, so getRetryInfo can be read for successes too. */
function capture(): { onResponse: (response: PipelineResponse) => void; last: () => PipelineResponse | undefined } {
  let raw: PipelineResponse | undefined;
  return { onResponse: (response) => (raw = response), last: () => raw };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

const firstWrite = (method: string) => ({
  method,
  predicate: (() => {
    let seen = false;
    return () => (seen ? false : (seen = true));
  })(),
});

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("amb");
  direct = env.directTableClient(table);
  await direct.createTable();
  env.simulator.resetRecords();
  client = env.tableClient(table);
  events = [];
});

describe("ambiguous writes on a real TableClient and Azurite", () => {
  it("insert applied, response lost: read back, reported as success", async () => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    const raw = capture();
    const result = await client.createEntity({ partitionKey: "p", rowKey: "r", n: 1, big: { value: "9007199254740993", type: "Int64" } }, raw);
    expect(result.etag).toMatch(/^W\/"datetime'/);
    const stored = await direct.getEntity("p", "r");
    expect(result.etag).toBe(stored.etag);
    expect(getRetryInfo(raw.last())).toMatchObject({ stopReason: "success", ambiguousWrite: "applied", possiblyApplied: false, unknownOutcomes: 1 });
    // POST (reset after the store applied it), POST (409), GET (the read-back, signed by the client's pipeline).
    expect(env.simulator.records.map((r) => `${r.method} ${r.status ?? "reset"}`)).toEqual(["POST reset", "POST 409", "GET 200"]);
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied", unknownOutcomes: 1 }]);
  });

  it("insert held back past the per-attempt timeout: read back, success", async () => {
    install(client, { tryTimeoutInMs: 300 });
    env.simulator.addFault({ kind: "slow", delayInMs: 1500, match: firstWrite("POST") });
    await client.createEntity({ partitionKey: "p", rowKey: "slow", when: new Date("2026-01-02T03:04:05.678Z") });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied" }]);
    expect((await direct.getEntity("p", "slow")).when).toBeDefined();
  });

  it("insert that collides with a different stored entity: the 409 surfaces, marked possibly applied", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "taken", owner: "someone else" });
    install(client);
    // Reset before the store saw it: the client cannot tell, so the 409 after it is ambiguous.
    env.simulator.addFault({ kind: "resetBeforeForward", match: firstWrite("POST") });
    const error = await rejection(client.createEntity({ partitionKey: "p", rowKey: "taken", owner: "me" }));
    expect(error).toMatchObject({ name: "RestError", statusCode: 409 });
    expect(getRetryInfo(error)).toMatchObject({ stopReason: "permanent", ambiguousWrite: "differs", possiblyApplied: true });
    expect(isPossiblyApplied(error)).toBe(true);
    expect(events).toMatchObject([{ operation: "insert_entity", result: "differs" }]);
  });

  it("a type difference is a difference: Int32 sent, Int64 stored", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "typed", n: { value: "5", type: "Int64" } });
    install(client);
    env.simulator.addFault({ kind: "resetBeforeForward", match: firstWrite("POST") });
    const error = await rejection(client.createEntity({ partitionKey: "p", rowKey: "typed", n: 5 }));
    expect(getRetryInfo(error)?.ambiguousWrite).toBe("differs");
  });

  it("an insert whose 409 comes without an unknown outcome is not read back", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "dup" });
    install(client);
    const error = await rejection(client.createEntity({ partitionKey: "p", rowKey: "dup" }));
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, possiblyApplied: false, unknownOutcomes: 0 });
    expect(env.simulator.count({ method: "GET" })).toBe(0);
    expect(events).toEqual([]);
  });

  it("switched off: the 409 surfaces, marked possibly applied, and nothing is read", async () => {
    install(client, { ambiguousWrites: false });
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    const error = await rejection(client.createEntity({ partitionKey: "p", rowKey: "off" }));
    expect(error).toMatchObject({ statusCode: 409 });
    expect(getRetryInfo(error)).toMatchObject({ possiblyApplied: true, ambiguousWrite: "unresolved" });
    expect(env.simulator.count({ method: "GET" })).toBe(0);
  });

  it("delete applied, response lost: the 404 is settled as success", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "gone" });
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("DELETE") });
    await client.deleteEntity("p", "gone");
    expect(events).toMatchObject([{ operation: "delete_entity", result: "applied" }]);
  });

  it.each(["Merge", "Replace"] as const)("conditional %s applied, response lost: the 412 is settled as success", async (mode) => {
    await direct.createEntity({ partitionKey: "p", rowKey: "u", a: "old", keep: 1 });
    const { etag } = await direct.getEntity("p", "u");
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite(mode === "Merge" ? "PATCH" : "PUT") });
    const result = await client.updateEntity({ partitionKey: "p", rowKey: "u", a: "new" }, mode, { etag });
    const stored = await direct.getEntity<{ a: string; keep?: number }>("p", "u");
    expect(stored.a).toBe("new");
    expect(stored.keep).toBe(mode === "Merge" ? 1 : undefined);
    expect(result.etag).toBe(stored.etag);
    expect(events).toMatchObject([{ operation: "update_entity", result: "applied" }]);
  });

  it("conditional update that lost to another writer: the 412 surfaces, marked", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "race", a: "v1" });
    const { etag } = await direct.getEntity("p", "race");
    await direct.updateEntity({ partitionKey: "p", rowKey: "race", a: "other" }, "Replace");
    install(client);
    env.simulator.addFault({ kind: "resetBeforeForward", match: firstWrite("PUT") });
    const error = await rejection(client.updateEntity({ partitionKey: "p", rowKey: "race", a: "mine" }, "Replace", { etag }));
    expect(error).toMatchObject({ statusCode: 412 });
    expect(getRetryInfo(error)).toMatchObject({ ambiguousWrite: "differs", possiblyApplied: true });
  });

  it("$batch applied, response lost: not read back; the SDK's error is marked possibly applied", async () => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    const error = await rejection(
      client.submitTransaction([
        ["create", { partitionKey: "b", rowKey: "1" }],
        ["create", { partitionKey: "b", rowKey: "2" }],
      ]),
    );
    expect(isRestError(error)).toBe(true);
    expect(isPossiblyApplied(error)).toBe(true);
    expect(getRetryInfo(error)?.ambiguousWrite).toBe("not_resolvable");
    expect(env.simulator.count({ method: "GET" })).toBe(0);
    expect(events).toMatchObject([{ operation: "batch", result: "not_resolvable" }]);
  });

  it("with a SAS credential the read-back is signed with the SAS, once", async () => {
    const sas = generateTableSas(table, new AzureNamedKeyCredential(env.azurite.accountName, env.azurite.accountKey), {
      permissions: { add: true, query: true, update: true, delete: true },
      expiresOn: new Date(Date.now() + 3600_000),
    });
    const sasClient = new TableClient(env.proxyTableUrl, table, new AzureSASCredential(sas), {
      allowInsecureConnection: true,
      retryOptions: { maxRetries: 0 },
    });
    install(sasClient);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    await sasClient.createEntity({ partitionKey: "p", rowKey: "sas", v: 1.5 });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied" }]);
    expect(env.simulator.records.map((r) => `${r.method} ${r.status ?? "reset"}`)).toEqual(["POST reset", "POST 409", "GET 200"]);
  });

  it("counts resolutions in azure_storage_ambiguous_writes_resolved_total", async () => {
    const registry = new Registry();
    install(client, { metrics: { registry } });
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    await client.createEntity({ partitionKey: "p", rowKey: "m" });
    const text = await registry.metrics();
    expect(text).toContain('azure_storage_ambiguous_writes_resolved_total{service="table",operation="insert_entity",result="applied"} 1');
    expect(text).toContain('azure_storage_retry_budget_exhausted_total{service="table"} 0');
  });
});
