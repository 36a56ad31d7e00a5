import { afterEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
import { fixedBackoff, getRetryInfo, installResilience, isCircuitOpenError } from "../../../src/index.js";

// getRetryInfo with the Tables SDK, from what the SDK hands the caller: the raw response its
// `onResponse` option receives (whose `request` the retry policy marked) and the error (RestError
// and ours carry the request or the record). A result the SDK built afresh (`getEntity`'s entity,
// a write's parsed headers, a transaction's result) keeps no link to either, and the install does
// not patch the client to give it one.

const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
const ENDPOINT = "https://myaccount.table.core.windows.net";

/** Answers each request with the next status (the last repeats), and keeps the requests. */
function scriptedClient(...statuses: number[]): HttpClient & { requests: PipelineRequest[] } {
  const requests: PipelineRequest[] = [];
  return {
    requests,
    async sendRequest(request) {
      const status = statuses[Math.min(requests.length, statuses.length - 1)] ?? 200;
      requests.push(request);
      const failed = status >= 400;
      const code = status === 404 ? "ResourceNotFound" : "ServerBusy";
      const headers = createHttpHeaders({ "content-type": "application/json;odata=nometadata", ...(failed ? { "x-ms-error-code": code } : { etag: 'W/"1"' }) });
      const bodyAsText = failed
        ? JSON.stringify({ "odata.error": { code, message: { lang: "en-US", value: "x" } } })
        : JSON.stringify({ PartitionKey: "p1", RowKey: "r1", value: 1 });
      return { request, status: status === 201 ? 204 : status, headers, bodyAsText };
    },
  };
}

/**
 * Answers by request: a row key (or `$batch`) in `busyRows` gets one 503 first; a `$batch` then
 * gets 202, a table listing or query a page of one item with a continuation until `pages` are
 * served, another GET an entity, any other method 204.
 */
function routedClient(busyRows: string[] = [], pages = 1): HttpClient & { requests: PipelineRequest[] } {
  const requests: PipelineRequest[] = [];
  const busy = new Set(busyRows);
  let served = 0;
  return {
    requests,
    async sendRequest(request) {
      requests.push(request);
      const row = busyRows.find((key) => request.url.includes(`RowKey='${key}'`) || (request.url.endsWith("$batch") && key === "$batch"));
      if (row !== undefined && busy.delete(row)) {
        const headers = createHttpHeaders({ "content-type": "application/json;odata=nometadata", "x-ms-error-code": "ServerBusy" });
        return { request, status: 503, headers, bodyAsText: JSON.stringify({ "odata.error": { code: "ServerBusy", message: { lang: "en-US", value: "x" } } }) };
      }
      if (request.url.endsWith("$batch")) return { request, status: 202, headers: createHttpHeaders(), bodyAsText: "" };
      const headers = createHttpHeaders({ "content-type": "application/json;odata=nometadata", etag: 'W/"1"' });
      if (request.method !== "GET") return { request, status: 204, headers };
      if (/\/orders\(\)|\/Tables(\?|$)/.test(request.url)) {
        served += 1;
        if (served < pages) {
          headers.set("x-ms-continuation-NextPartitionKey", `p${served}`);
          headers.set("x-ms-continuation-NextRowKey", `r${served}`);
          headers.set("x-ms-continuation-NextTableName", `t${served}`);
        }
        const item = request.url.includes("/Tables") ? { TableName: `t${served}` } : { PartitionKey: "p1", RowKey: `r${served}` };
        return { request, status: 200, headers, bodyAsText: JSON.stringify({ value: [item] }) };
      }
      return { request, status: 200, headers, bodyAsText: JSON.stringify({ PartitionKey: "p1", RowKey: "r1", value: 1 }) };
    },
  };
}

function tableClient(httpClient: HttpClient): TableClient {
  return new TableClient(ENDPOINT, "orders", credential, { httpClient });
}

/** An `onResponse` that keeps every raw response it hears. */
function hearing(): { onResponse: (response: PipelineResponse) => void; heard: PipelineResponse[]; last(): PipelineResponse | undefined } {
  const heard: PipelineResponse[] = [];
  return { heard, onResponse: (response) => void heard.push(response), last: () => heard.at(-1) };
}

const fast = fixedBackoff({ maxRetries: 3, delayInMs: 1 });
const once = { attempts: 1, classes: ["success"], stopReason: "success", unknownOutcomes: 0 };
const afterThrottle = { attempts: 2, classes: ["throttled", "success"], stopReason: "success", possiblyApplied: false };

/** How a call ends: it throws before returning, its promise rejects, or it resolves. */
async function outcome(call: () => Promise<unknown>): Promise<{ kind: "thrown" | "rejected" | "resolved"; error?: unknown }> {
  let pending: Promise<unknown>;
  try {
    pending = call();
  } catch (error) {
    return { kind: "thrown", error };
  }
  return pending.then(
    () => ({ kind: "resolved" }),
    (error: unknown) => ({ kind: "rejected", error }),
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe("getRetryInfo from a TableClient's onResponse raw response", () => {
  it("answers on a read's raw response after a retry, and on its request", async () => {
    const client = tableClient(scriptedClient(503, 200));
    installResilience(client, { retry: fast, metrics: false });
    let raw: PipelineResponse | undefined;
    const entity = await client.getEntity<{ value: number }>("p1", "r1", { onResponse: (response) => (raw = response) });
    expect(entity.value).toBe(1);
    expect(getRetryInfo(raw)).toMatchObject(afterThrottle);
    expect(getRetryInfo(raw?.request)).toMatchObject(afterThrottle);
  });

  it("answers on a write's raw response at first try", async () => {
    const client = tableClient(scriptedClient(201));
    installResilience(client, { retry: fast, metrics: false });
    let raw: PipelineResponse | undefined;
    await client.upsertEntity({ partitionKey: "p1", rowKey: "r1", value: 1 }, "Replace", { onResponse: (response) => (raw = response) });
    expect(getRetryInfo(raw)).toMatchObject(once);
  });

  it("answers on each operation's raw response: createEntity, updateEntity, deleteEntity, getAccessPolicy, createTable, deleteTable", async () => {
    const client = tableClient(routedClient(["r2"]));
    installResilience(client, { retry: fast, metrics: false });
    const calls: [string, (ear: { onResponse: (r: PipelineResponse) => void }) => Promise<unknown>][] = [
      ["createEntity", (ear) => client.createEntity({ partitionKey: "p1", rowKey: "r1" }, ear)],
      ["updateEntity", (ear) => client.updateEntity({ partitionKey: "p1", rowKey: "r2", value: 2 }, "Merge", ear)],
      ["deleteEntity", (ear) => client.deleteEntity("p1", "r1", ear)],
      ["getAccessPolicy", (ear) => client.getAccessPolicy(ear)],
      ["createTable", (ear) => client.createTable(ear)],
      ["deleteTable", (ear) => client.deleteTable(ear)],
    ];
    const infos: Record<string, unknown> = {};
    for (const [name, call] of calls) {
      const ear = hearing();
      await call(ear);
      expect(ear.heard, name).toHaveLength(1);
      infos[name] = getRetryInfo(ear.last());
    }
    expect(infos).toMatchObject({
      createEntity: once,
      updateEntity: afterThrottle,
      deleteEntity: once,
      getAccessPolicy: once,
      createTable: once,
      deleteTable: once,
    });
  });

  it("answers on each page's raw response of listEntities, whether iterated by page or entity by entity", async () => {
    const byPage = tableClient(routedClient([], 3));
    installResilience(byPage, { retry: fast, metrics: false });
    const pagesHeard = hearing();
    const pages = [];
    for await (const page of byPage.listEntities({ onResponse: pagesHeard.onResponse }).byPage()) pages.push(page);
    expect(pages.map((page) => page.length)).toEqual([1, 1, 1]);
    expect(pagesHeard.heard).toHaveLength(3);
    for (const raw of pagesHeard.heard) expect(getRetryInfo(raw)).toMatchObject(once);
    // Each page's own operation: three records, not one shared.
    expect(new Set(pagesHeard.heard.map((raw) => getRetryInfo(raw))).size).toBe(3);

    const oneByOne = tableClient(routedClient([], 2));
    installResilience(oneByOne, { retry: fast, metrics: false });
    const entitiesHeard = hearing();
    const rows = [];
    for await (const entity of oneByOne.listEntities({ onResponse: entitiesHeard.onResponse })) rows.push(entity.rowKey);
    expect(rows).toEqual(["r1", "r2"]);
    expect(entitiesHeard.heard.map((raw) => getRetryInfo(raw)?.stopReason)).toEqual(["success", "success"]);
  });

  it("answers on a TableServiceClient's getProperties and listTables pages", async () => {
    const service = new TableServiceClient(ENDPOINT, credential, { httpClient: routedClient([], 2) });
    installResilience(service, { retry: fast, metrics: false });
    const properties = hearing();
    await service.getProperties(properties);
    expect(getRetryInfo(properties.last())).toMatchObject(once);
    const listing = hearing();
    const names = [];
    for await (const table of service.listTables({ onResponse: listing.onResponse })) names.push(table.name);
    expect(names).toEqual(["t1", "t2"]);
    expect(listing.heard.map((raw) => getRetryInfo(raw)?.attempts)).toEqual([1, 1]);
  });

  it("gives concurrent calls each their own record", async () => {
    const client = tableClient(routedClient(["busy"]));
    installResilience(client, { retry: fast, metrics: false });
    const busy = hearing();
    const calm = hearing();
    await Promise.all([client.getEntity("p1", "busy", busy), client.getEntity("p1", "calm", calm)]);
    expect(getRetryInfo(busy.last())).toMatchObject(afterThrottle);
    expect(getRetryInfo(calm.last())).toMatchObject(once);
  });
});

describe("getRetryInfo from a Tables error", () => {
  it("answers on the SDK's RestError, after retries and on a permanent failure", async () => {
    const client = tableClient(scriptedClient(503));
    installResilience(client, { retry: fast, metrics: false, circuitBreaker: false });
    const exhausted = await client.getEntity("p1", "r1").catch((e: unknown) => e);
    expect(exhausted).toMatchObject({ name: "RestError", statusCode: 503 });
    expect(getRetryInfo(exhausted)).toMatchObject({ attempts: 4, stopReason: "retries-exhausted" });

    const missing = tableClient(scriptedClient(404));
    installResilience(missing, { retry: fast, metrics: false });
    const notFound = await missing.getEntity("p1", "r1").catch((e: unknown) => e);
    expect(notFound).toMatchObject({ name: "RestError", statusCode: 404 });
    expect(getRetryInfo(notFound)).toMatchObject({ attempts: 1, classes: ["permanent"], stopReason: "permanent" });
  });

  it("answers on a failed transaction's RestError (the SDK throws it with the $batch request)", async () => {
    const client = tableClient(scriptedClient(503));
    installResilience(client, { retry: fast, metrics: false, circuitBreaker: false });
    const error = await client.submitTransaction([["upsert", { partitionKey: "p1", rowKey: "r1" }]]).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RestError", statusCode: 503 });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 4, classes: ["throttled", "throttled", "throttled", "throttled"], stopReason: "retries-exhausted" });
  });

  it("answers on the package's own error: a CircuitOpenError sent nothing, and says when to come back", async () => {
    vi.useFakeTimers();
    const http = scriptedClient(503);
    const client = tableClient(http);
    const handle = installResilience(client, {
      retry: fixedBackoff({ maxRetries: 12, delayInMs: 100 }),
      // A probe period longer than the second the test waits: the circuit is still open when asked.
      circuitBreaker: { consecutiveFailures: 5, resetTimeoutInMs: 3_000 },
      caller: { failFast: true },
      metrics: false,
    });
    try {
      const first = client.getEntity("hot", "r1").catch((e: unknown) => e);
      await vi.advanceTimersByTimeAsync(1_000);
      await first;
      const sent = http.requests.length;
      const refused = await client.getEntity("hot", "r2").catch((e: unknown) => e);
      expect(refused).toSatisfy(isCircuitOpenError);
      expect(http.requests).toHaveLength(sent);
      const info = getRetryInfo(refused);
      expect(info).toMatchObject({ attempts: 1, classes: ["circuit_open"], stopReason: "circuit-open" });
      expect(info?.retryAfterInMs).toBeGreaterThan(0);
    } finally {
      handle.dispose();
    }
  });
});

describe("the install leaves the TableClient as the SDK made it", () => {
  it("adds no own property and replaces no method; the pipeline gains only the package's policies", async () => {
    const client = tableClient(routedClient());
    const ownBefore = Reflect.ownKeys(client);
    const policiesBefore = client.pipeline.getOrderedPolicies().map((policy) => policy.name);
    const handle = installResilience(client, { retry: fast, metrics: false });
    expect(Reflect.ownKeys(client)).toEqual(ownBefore);
    for (const name of ["getEntity", "createEntity", "upsertEntity", "updateEntity", "deleteEntity", "submitTransaction", "listEntities"] as const) {
      expect(client[name], name).toBe(TableClient.prototype[name]);
    }
    const added = client.pipeline
      .getOrderedPolicies()
      .map((policy) => policy.name)
      .filter((name) => !policiesBefore.includes(name));
    expect(added.sort()).toEqual(["ambiguousWriteReadBackPolicy", "resendCountPolicy", "resilientRetryPolicy"]);
    handle.dispose();
    expect(client.pipeline.getOrderedPolicies().map((policy) => policy.name)).toEqual(policiesBefore);
  });

  it("calls the user's onResponse once per operation and leaves their options object as it was", async () => {
    const client = tableClient(routedClient(["r1"]));
    installResilience(client, { retry: fast, metrics: false });
    const heard: number[] = [];
    const onResponse = (response: PipelineResponse): void => void heard.push(response.status);
    const options = { onResponse };
    await client.getEntity("p1", "r1", options);
    await client.upsertEntity({ partitionKey: "p1", rowKey: "r1" }, undefined, options);
    // The 503 before the read's success is the policy's: onResponse hears the operation's answer.
    expect(heard).toEqual([200, 204]);
    expect(Object.keys(options)).toEqual(["onResponse"]);
  });

  it("a result the SDK built afresh carries no record: the entity, a write's headers, a transaction's result", async () => {
    const client = tableClient(routedClient(["r1", "$batch"]));
    installResilience(client, { retry: fast, metrics: false });
    const entity = await client.getEntity("p1", "r1");
    const written = await client.upsertEntity({ partitionKey: "p1", rowKey: "r2" });
    const transaction = await client.submitTransaction([["upsert", { partitionKey: "p1", rowKey: "r3" }]]);
    expect(transaction.status).toBe(202);
    expect([getRetryInfo(entity), getRetryInfo(written), getRetryInfo(transaction)]).toEqual([undefined, undefined, undefined]);
  });

  it("lets the SDK's errors through untouched, thrown or rejected", async () => {
    // A missing partition key: recent SDKs throw at once, older ones (13.1) reject; either way,
    // the installed client does what the bare one does, with the same error.
    const bare = await outcome(() => tableClient(routedClient()).getEntity(undefined as unknown as string, "r1"));
    expect(bare.kind).not.toBe("resolved");
    const client = tableClient(routedClient());
    installResilience(client, { retry: fast, metrics: false });
    const installed = await outcome(() => client.getEntity(undefined as unknown as string, "r1"));
    expect(installed.kind).toBe(bare.kind);
    expect(installed.error).toBeInstanceOf(Error);
    expect((installed.error as Error).message).toBe((bare.error as Error).message);
    const failing = tableClient(scriptedClient(404));
    installResilience(failing, { retry: fast, metrics: false });
    const error = await failing.getEntity("p1", "r1").catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RestError", statusCode: 404 });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stopReason: "permanent" });
  });
});
