import { afterEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
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
      circuitBreaker: { mode: "fail", consecutiveFailures: 5 },
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
