import { afterEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";

const TRANSACTIONS_LINKED = Number(process.versions.node.split(".")[0]) >= 24;
import { fixedBackoff, getRetryInfo, installResilience, isCircuitOpenError } from "../../../src/index.js";

// getRetryInfo with the Tables SDK, whose results keep no link to the request or the response:
// `getEntity` answers an entity built afresh from the parsed body, a write the parsed headers
// spread into a new object. What a caller holds with a link is the error (RestError and ours
// carry the request) and the raw response that the SDK's `onResponse` option hands over.

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

function tableClient(httpClient: HttpClient): TableClient {
  const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
  return new TableClient("https://myaccount.table.core.windows.net", "orders", credential, { httpClient });
}

const fast = fixedBackoff({ maxRetries: 3, delayInMs: 1 });

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

describe("getRetryInfo with TableClient", () => {
  it("answers on a read's raw response (onResponse) after a retry, and on the request", async () => {
    const http = scriptedClient(503, 200);
    const client = tableClient(http);
    installResilience(client, { retry: fast, metrics: false });
    let raw: PipelineResponse | undefined;
    const entity = await client.getEntity<{ value: number }>("p1", "r1", { onResponse: (response) => (raw = response) });
    expect(entity.value).toBe(1);
    const expected = { attempts: 2, classes: ["throttled", "success"], stopReason: "success", possiblyApplied: false };
    expect(getRetryInfo(raw)).toMatchObject(expected);
    expect(getRetryInfo(raw?.request)).toMatchObject(expected);
  });

  it("answers on a write's raw response at first try", async () => {
    const client = tableClient(scriptedClient(201));
    installResilience(client, { retry: fast, metrics: false });
    let raw: PipelineResponse | undefined;
    await client.upsertEntity({ partitionKey: "p1", rowKey: "r1", value: 1 }, "Replace", { onResponse: (response) => (raw = response) });
    expect(getRetryInfo(raw)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success", unknownOutcomes: 0 });
  });

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

  it("answers on the package's own error: a CircuitOpenError sent nothing, and says when to come back", async () => {
    vi.useFakeTimers();
    const http = scriptedClient(503);
    const client = tableClient(http);
    const handle = installResilience(client, {
      retry: fixedBackoff({ maxRetries: 12, delayInMs: 100 }),
      circuitBreaker: { consecutiveFailures: 5 },
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

/** Answers by request: a `$batch` gets 202 (a transaction's success), else like {@link scriptedClient}; `busyRows` get one 503 first. */
function routedClient(busyRows: string[] = []): HttpClient & { requests: PipelineRequest[] } {
  const requests: PipelineRequest[] = [];
  const busy = new Set(busyRows);
  return {
    requests,
    async sendRequest(request) {
      requests.push(request);
      const row = busyRows.find((key) => request.url.includes(`RowKey='${key}'`) || request.url.endsWith("$batch") && key === "$batch");
      if (row !== undefined && busy.delete(row)) {
        const headers = createHttpHeaders({ "content-type": "application/json;odata=nometadata", "x-ms-error-code": "ServerBusy" });
        return { request, status: 503, headers, bodyAsText: JSON.stringify({ "odata.error": { code: "ServerBusy", message: { lang: "en-US", value: "x" } } }) };
      }
      if (request.url.endsWith("$batch")) return { request, status: 202, headers: createHttpHeaders(), bodyAsText: "" };
      const headers = createHttpHeaders({ "content-type": "application/json;odata=nometadata", etag: 'W/"1"' });
      if (request.method !== "GET") return { request, status: 204, headers };
      return { request, status: 200, headers, bodyAsText: JSON.stringify({ PartitionKey: "p1", RowKey: "r1", value: 1 }) };
    },
  };
}

describe("getRetryInfo on a Tables result (the install marks what the SDK built afresh)", () => {
  it("answers on getEntity's entity after a retry, and leaves the entity's keys, JSON and spread as the SDK made them", async () => {
    const plain = await tableClient(routedClient()).getEntity("p1", "r1");
    const client = tableClient(routedClient(["r1"]));
    installResilience(client, { retry: fast, metrics: false });
    const entity = await client.getEntity("p1", "r1");
    expect(getRetryInfo(entity)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], stopReason: "success", possiblyApplied: false });
    expect(Object.keys(entity)).toEqual(Object.keys(plain));
    expect(JSON.stringify(entity)).toBe(JSON.stringify(plain));
    expect(Object.getOwnPropertySymbols({ ...entity })).toEqual([]);
  });

  it("answers on each write's result: createEntity, upsertEntity, updateEntity, deleteEntity", async () => {
    const client = tableClient(routedClient(["r2"]));
    installResilience(client, { retry: fast, metrics: false });
    const created = await client.createEntity({ partitionKey: "p1", rowKey: "r1", value: 1 });
    const upserted = await client.upsertEntity({ partitionKey: "p1", rowKey: "r2", value: 1 }, "Replace");
    const updated = await client.updateEntity({ partitionKey: "p1", rowKey: "r1", value: 2 });
    const deleted = await client.deleteEntity("p1", "r1");
    const once = { attempts: 1, classes: ["success"], stopReason: "success", unknownOutcomes: 0 };
    expect(getRetryInfo(created)).toMatchObject(once);
    expect(getRetryInfo(upserted)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], stopReason: "success" });
    expect(getRetryInfo(updated)).toMatchObject(once);
    expect(getRetryInfo(deleted)).toMatchObject(once);
    expect(Object.keys(created)).not.toContain("_response");
    expect(JSON.stringify(deleted)).toBe(JSON.stringify({ ...deleted }));
  });

  // Node 22 has no async context frames: there the transaction is not wrapped (src/install/tableResultInfo.ts).
  it.skipIf(!TRANSACTIONS_LINKED)("answers on submitTransaction's result, with and without a retry", async () => {
    const http = routedClient(["$batch"]);
    const client = tableClient(http);
    installResilience(client, { retry: fast, metrics: false });
    const retried = await client.submitTransaction([["upsert", { partitionKey: "p1", rowKey: "r1", value: 1 }]]);
    const first = await client.submitTransaction([["delete", { partitionKey: "p1", rowKey: "r1" }]]);
    expect(retried.status).toBe(202);
    expect(getRetryInfo(retried)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], stopReason: "success" });
    expect(getRetryInfo(first)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
    expect(Object.keys(first)).toEqual(["status", "subResponses", "getResponseForEntity"]);
  });

  it.skipIf(!TRANSACTIONS_LINKED)("gives concurrent calls each their own record", async () => {
    const client = tableClient(routedClient(["busy", "$batch"]));
    installResilience(client, { retry: fast, metrics: false });
    const [busy, calm, batchBusy, batchCalm] = await Promise.all([
      client.getEntity("p1", "busy"),
      client.getEntity("p1", "calm"),
      client.submitTransaction([["upsert", { partitionKey: "p1", rowKey: "a" }]]),
      client.submitTransaction([["upsert", { partitionKey: "p2", rowKey: "b" }]]),
    ]);
    expect(getRetryInfo(busy)?.attempts).toBe(2);
    expect(getRetryInfo(calm)?.attempts).toBe(1);
    // One of the two transactions met the 503: which one is the order their requests left in.
    expect([getRetryInfo(batchBusy)?.attempts, getRetryInfo(batchCalm)?.attempts].sort()).toEqual([1, 2]);
  });

  it("calls the user's onResponse and leaves their options object as it was", async () => {
    const client = tableClient(routedClient());
    installResilience(client, { retry: fast, metrics: false });
    const heard: number[] = [];
    const onResponse = (response: PipelineResponse): void => void heard.push(response.status);
    const options = { onResponse };
    const entity = await client.getEntity("p1", "r1", options);
    await client.upsertEntity({ partitionKey: "p1", rowKey: "r1" }, undefined, options);
    expect(heard).toEqual([200, 204]);
    expect(options).toEqual({ onResponse });
    expect(Object.keys(options)).toEqual(["onResponse"]);
    expect(getRetryInfo(entity)?.attempts).toBe(1);
  });

  it("marks listEntities' byPage() pages; entities iterated one by one are the SDK's", async () => {
    const client = tableClient(routedClient());
    installResilience(client, { retry: fast, metrics: false });
    const pages = [];
    for await (const page of client.listEntities().byPage()) pages.push(page);
    expect(pages).toHaveLength(1);
    expect(getRetryInfo(pages[0])).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
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

  it("dispose restores the class's methods and the pipeline; installing again wraps once", async () => {
    const client = tableClient(routedClient());
    const policiesBefore = client.pipeline.getOrderedPolicies().length;
    installResilience(client, { retry: fast, metrics: false });
    const handle = installResilience(client, { retry: fast, metrics: false });
    const wrapped = client.getEntity;
    expect(wrapped).not.toBe(TableClient.prototype.getEntity);
    expect(getRetryInfo(await client.getEntity("p1", "r1"))?.attempts).toBe(1);
    handle.dispose();
    for (const name of ["getEntity", "createEntity", "upsertEntity", "updateEntity", "deleteEntity", "submitTransaction", "listEntities", "getAccessPolicy", "setAccessPolicy"]) {
      expect(Object.hasOwn(client, name)).toBe(false);
    }
    expect(client.getEntity).toBe(TableClient.prototype.getEntity);
    expect(client.pipeline.getOrderedPolicies()).toHaveLength(policiesBefore);
    expect(getRetryInfo(await client.getEntity("p1", "r1"))).toBeUndefined();
  });
});
