import { AzureNamedKeyCredential, AzureSASCredential, TableClient, generateTableSas } from "@azure/data-tables";
import { READ_BACK_REQUEST_ID_SUFFIX } from "../../src/ambiguousWrites/ambiguousWriteReadBack.js";
import { isRestError, type PipelineResponse } from "@azure/core-rest-pipeline";
import { Registry } from "prom-client";
import { beforeEach, describe, expect, it } from "vitest";
import { getRetryInfo, installResilience, type AmbiguousWriteEvent, type InstallResilienceOptions } from "../../src/index.js";
import { isPossiblyApplied } from "../support/possiblyApplied.js";
import { captureAzureLog } from "../support/captureAzureLog.js";
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
    // The read-back names the write it settles: the write's client request id, plus the suffix.
    const [write, retry, readBack] = env.simulator.records;
    expect(write?.clientRequestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(retry?.clientRequestId).toBe(write?.clientRequestId);
    expect(readBack?.clientRequestId).toBe(`${write?.clientRequestId}${READ_BACK_REQUEST_ID_SUFFIX}`);
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

  it("delete applied, response lost: the 404 surfaces, marked not_resolvable (another writer's delete leaves the same)", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "gone" });
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("DELETE") });
    const error = await rejection(client.deleteEntity("p", "gone"));
    expect(error).toMatchObject({ statusCode: 404 });
    expect(getRetryInfo(error)).toMatchObject({ ambiguousWrite: "not_resolvable", possiblyApplied: true });
    expect(env.simulator.count({ method: "GET" })).toBe(0);
    expect(events).toMatchObject([{ operation: "delete_entity", result: "not_resolvable" }]);
  });

  it.each(["Merge", "Replace"] as const)("conditional %s applied, response lost: the 412 surfaces, marked not_resolvable", async (mode) => {
    await direct.createEntity({ partitionKey: "p", rowKey: "u", a: "old", keep: 1 });
    const { etag } = await direct.getEntity("p", "u");
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite(mode === "Merge" ? "PATCH" : "PUT") });
    const error = await rejection(client.updateEntity({ partitionKey: "p", rowKey: "u", a: "new" }, mode, { etag }));
    // It was applied, but nothing this writer can read shows that it was this write.
    const stored = await direct.getEntity<{ a: string; keep?: number }>("p", "u");
    expect(stored.a).toBe("new");
    expect(error).toMatchObject({ statusCode: 412 });
    expect(getRetryInfo(error)).toMatchObject({ ambiguousWrite: "not_resolvable", possiblyApplied: true });
    expect(env.simulator.count({ method: "GET" })).toBe(0);
    expect(events).toMatchObject([{ operation: "update_entity", result: "not_resolvable" }]);
  });

  it("conditional update that lost to another writer: the 412 surfaces, marked", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "race", a: "v1" });
    const { etag } = await direct.getEntity("p", "race");
    await direct.updateEntity({ partitionKey: "p", rowKey: "race", a: "other" }, "Replace");
    install(client);
    env.simulator.addFault({ kind: "resetBeforeForward", match: firstWrite("PUT") });
    const error = await rejection(client.updateEntity({ partitionKey: "p", rowKey: "race", a: "mine" }, "Replace", { etag }));
    expect(error).toMatchObject({ statusCode: 412 });
    expect(getRetryInfo(error)).toMatchObject({ ambiguousWrite: "not_resolvable", possiblyApplied: true });
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

// Issue 17 item 1: optimistic concurrency between two real TableClients through the simulator.
describe("two writers racing with ETags: a refused conditional update is never reported as success", () => {
  const claim = { partitionKey: "jobs", rowKey: "42", state: "claimed" };

  it("B updates with e0; A updates with the same stale e0, its 412 lost after the store answered: A gets the 412, marked", async () => {
    await direct.createEntity({ partitionKey: "jobs", rowKey: "42", state: "open" });
    const writerA = env.tableClient(table);
    const writerB = env.tableClient(table);
    install(writerA);
    install(writerB);
    const { etag: e0 } = await writerA.getEntity("jobs", "42");
    await writerB.updateEntity(claim, "Replace", { etag: e0 });
    env.simulator.resetRecords();
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("PUT") });
    const error = await rejection(writerA.updateEntity(claim, "Replace", { etag: e0 }));
    // The store refused A twice; the stored entity equals what A sent, with an ETag other than e0.
    expect(env.simulator.records.filter((r) => r.method === "PUT").map((r) => r.upstreamStatus ?? r.status)).toEqual([412, 412]);
    const stored = await direct.getEntity<{ state: string }>("jobs", "42");
    expect(stored.state).toBe("claimed");
    expect(stored.etag).not.toBe(e0);
    expect(error).toMatchObject({ name: "RestError", statusCode: 412 });
    expect(getRetryInfo(error)).toMatchObject({ stopReason: "permanent", ambiguousWrite: "not_resolvable", possiblyApplied: true, unknownOutcomes: 1 });
  });

  it("both send the same claim on e0 at once, both answers lost: at most one is told it won, every refusal is marked", async () => {
    await direct.createEntity({ partitionKey: "jobs", rowKey: "42", state: "open" });
    const writers = [env.tableClient(table), env.tableClient(table)];
    for (const writer of writers) install(writer);
    const { etag: e0 } = await direct.getEntity("jobs", "42");
    env.simulator.addFault({ kind: "resetAfterForward", match: { method: "PUT" }, count: 2 });
    const outcomes = await Promise.allSettled(writers.map((writer) => writer.updateEntity(claim, "Replace", { etag: e0 })));
    // Exactly one first attempt was applied (204) and one refused (412), but neither writer saw its answer.
    expect(env.simulator.records.filter((r) => r.fault === "resetAfterForward").map((r) => r.upstreamStatus).sort()).toEqual([204, 412]);
    expect(outcomes.filter((o) => o.status === "fulfilled").length).toBeLessThanOrEqual(1);
    for (const outcome of outcomes) {
      if (outcome.status === "rejected") {
        expect(outcome.reason).toMatchObject({ statusCode: 412 });
        expect(isPossiblyApplied(outcome.reason)).toBe(true);
      }
    }
  });

  it('Azurite\'s "should allow any valid weak etag": If-Match W/"wrong" refused, the refusal lost: the 412 surfaces', async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "weak", a: "same" });
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("PATCH") });
    const error = await rejection(client.updateEntity({ partitionKey: "p", rowKey: "weak", a: "same" }, "Merge", { etag: 'W/"wrong"' }));
    expect(env.simulator.records.filter((r) => r.method === "PATCH").map((r) => r.upstreamStatus ?? r.status)).toEqual([412, 412]);
    expect(error).toMatchObject({ statusCode: 412 });
    expect(isPossiblyApplied(error)).toBe(true);
  });
});

// Issue 17 item 2: each EDM type as Azurite stores and returns it, read back after an insert whose answer was lost.
describe("EDM round trips through a real read-back", () => {
  it("a whole-number Edm.Double (answered 5.0, unannotated) reads back as applied", async () => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    await client.createEntity({ partitionKey: "p", rowKey: "double", d: { value: "5", type: "Double" }, zero: { value: "-0", type: "Double" }, big: 3e9 });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied" }]);
  });

  it("special Doubles, Int64, Guid, Binary, Boolean and null read back as applied", async () => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    await client.createEntity({
      partitionKey: "p",
      rowKey: "types",
      nan: { value: "NaN", type: "Double" },
      inf: { value: "Infinity", type: "Double" },
      ninf: { value: "-Infinity", type: "Double" },
      i64: { value: "-9223372036854775808", type: "Int64" },
      g: { value: "0B3C9C35-6F3F-4F4A-9F3E-1C2B3A4D5E6F", type: "Guid" },
      b: new Uint8Array([0, 1, 254, 255]),
      t: false,
      n: null as unknown as string,
    });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied" }]);
  });

  it("DateTimes with and without an offset or fractional digits read back as applied", async () => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    await client.createEntity({
      partitionKey: "p",
      rowKey: "dates",
      ms: new Date("2026-01-02T03:04:05.678Z"),
      whole: { value: "2026-01-02T03:04:05Z", type: "DateTime" },
      ticks: { value: "2026-01-02T03:04:05.1234567Z", type: "DateTime" },
      offset: { value: "2026-01-02T05:04:05.1234567+02:00", type: "DateTime" },
    });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied" }]);
  });
});

// Issue 21 item 1: Azurite's own Tables suite inserts `{ value: "2023-01-01T23:00:00", type: "DateTime" }`
// (no zone, which the service reads as UTC and Azurite stores with a Z added); applied inserts of it
// were reported failed after a reset.
describe("an applied insert with a DateTime as callers write it, its answer lost", () => {
  it.each([
    ["without a zone (UTC)", "2023-01-01T23:00:00"],
    ["with seven fractional digits, no zone", "2023-01-01T23:00:00.1234567"],
    ["with an offset and seven fractional digits", "2023-01-02T01:00:00.1234567+02:00"],
  ])("%s: read back, settled as applied", async (_name, value) => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    const raw = capture();
    const result = await client.createEntity({ partitionKey: "p", rowKey: "dt", dateField: { value, type: "DateTime" } }, raw);
    expect(env.simulator.records.map((r) => `${r.method} ${r.status ?? "reset"}`)).toEqual(["POST reset", "POST 409", "GET 200"]);
    expect(getRetryInfo(raw.last())).toMatchObject({ stopReason: "success", ambiguousWrite: "applied", possiblyApplied: false, unknownOutcomes: 1 });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied" }]);
    expect(result.etag).toBe((await direct.getEntity("p", "dt")).etag);
  });
});

// Issue 17 item 3: the store's answer cut while the client read its body.
describe("an answer cut mid-body", () => {
  it("a read is retried and succeeds", async () => {
    await direct.createEntity({ partitionKey: "p", rowKey: "cut", v: "x".repeat(2000) });
    install(client);
    env.simulator.addFault({ kind: "cutBodyAfterForward", match: firstWrite("GET") });
    const entity = await client.getEntity<{ v: string }>("p", "cut");
    expect(entity.v).toHaveLength(2000);
    expect(env.simulator.records.map((r) => `${r.method} ${r.fault ?? r.status}`)).toEqual(["GET cutBodyAfterForward", "GET 200"]);
  });

  it("a $batch applied, its answer cut: retried, and the SDK's error is marked possibly applied", async () => {
    install(client);
    env.simulator.addFault({ kind: "cutBodyAfterForward", match: firstWrite("POST") });
    const error = await rejection(
      client.submitTransaction([
        ["create", { partitionKey: "c", rowKey: "1" }],
        ["create", { partitionKey: "c", rowKey: "2" }],
      ]),
    );
    expect(env.simulator.records.map((r) => `${r.method} ${r.fault ?? r.status}`)).toEqual(["POST cutBodyAfterForward", "POST 202"]);
    expect((await direct.getEntity("c", "1")).rowKey).toBe("1");
    expect(isRestError(error)).toBe(true);
    expect(getRetryInfo(error)).toMatchObject({ ambiguousWrite: "not_resolvable", possiblyApplied: true, unknownOutcomes: 1 });
  });
});

// Issue 17 item 5: the read-back needs Read permission.
describe("a SAS that may add but not read", () => {
  it("the read-back is refused (403): the 409 surfaces marked unresolved, and the log says the credential lacks Read", async () => {
    const sas = generateTableSas(table, new AzureNamedKeyCredential(env.azurite.accountName, env.azurite.accountKey), {
      permissions: { add: true },
      expiresOn: new Date(Date.now() + 3600_000),
    });
    const addOnly = new TableClient(env.proxyTableUrl, table, new AzureSASCredential(sas), { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } });
    install(addOnly);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    const log = captureAzureLog("info");
    let error: unknown;
    try {
      error = await rejection(addOnly.createEntity({ partitionKey: "p", rowKey: "addonly" }));
    } finally {
      log.stop();
    }
    expect(env.simulator.records.map((r) => `${r.method} ${r.status ?? "reset"}`)).toEqual(["POST reset", "POST 409", "GET 403"]);
    expect(error).toMatchObject({ statusCode: 409 });
    expect(getRetryInfo(error)).toMatchObject({ ambiguousWrite: "unresolved", possiblyApplied: true });
    expect(log.lines.join("\n")).toContain("read-back refused (403): the credential lacks Read permission");
  });
});


// Issue 30 item 4: createTable and deleteTable whose answer was lost get 409 TableAlreadyExists
// or 404 on the retry, which the SDK swallows: the table exists, or is gone, as asked.
describe("createTable and deleteTable whose answer was lost", () => {
  it("createTable: reset after Azurite created it, the retry's 409 is no ambiguity; logged at info", async () => {
    const fresh = uniqueTableName("ambct");
    const creator = env.tableClient(fresh);
    install(creator);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("POST") });
    const log = captureAzureLog("info");
    try {
      await creator.createTable();
    } finally {
      log.stop();
    }
    expect(env.simulator.records.map((r) => `${r.method} ${r.status ?? "reset"}`)).toEqual(["POST reset", "POST 409"]);
    expect(events).toEqual([]);
    expect(log.lines.join("\n")).toContain("create_table retried after an unknown outcome: the table exists, as asked.");
    await env.directTableClient(fresh).deleteTable();
  });

  it("deleteTable: reset after Azurite deleted it, the retry's 404 is no ambiguity; logged at info", async () => {
    install(client);
    env.simulator.addFault({ kind: "resetAfterForward", match: firstWrite("DELETE") });
    const log = captureAzureLog("info");
    try {
      await client.deleteTable();
    } finally {
      log.stop();
    }
    expect(env.simulator.records.map((r) => `${r.method} ${r.status ?? "reset"}`)).toEqual(["DELETE reset", "DELETE 404"]);
    expect(events).toEqual([]);
    expect(log.lines.join("\n")).toContain("delete_table retried after an unknown outcome: the table is gone, as asked.");
  });
});
