import { describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient, TableServiceClient } from "@azure/data-tables";
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineFromOptions,
  type HttpClient,
  type PipelineRequest,
} from "@azure/core-rest-pipeline";
import { BlobServiceClient, ContainerClient } from "@azure/storage-blob";
import { QueueClient } from "@azure/storage-queue";
import { installResilience, getRetryInfo } from "../../../src/index.js";
import { resilientRetryPolicyName } from "../../../src/policies/resilientRetryPolicy.js";

// The well-known, public Azurite development key: not a secret.
const credential = new AzureNamedKeyCredential(
  "devstoreaccount1",
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
);

/** An HttpClient that answers every request with the given status and counts the requests. */
function countingClient(status: number, errorCode?: string): HttpClient & { requests: PipelineRequest[] } {
  const requests: PipelineRequest[] = [];
  return {
    requests,
    async sendRequest(request) {
      requests.push(request);
      const headers = createHttpHeaders({ "content-type": "application/json", ...(errorCode ? { "x-ms-error-code": errorCode } : {}) });
      const bodyAsText = errorCode ? JSON.stringify({ "odata.error": { code: errorCode, message: { lang: "en-US", value: "x" } } }) : "{}";
      return { request, status, headers, bodyAsText };
    },
  };
}

function tableClient(httpClient?: HttpClient): TableClient {
  return new TableClient("https://myaccount.table.core.windows.net", "orders", credential, { httpClient });
}

const names = (client: { pipeline: { getOrderedPolicies(): Array<{ name: string }> } }) =>
  client.pipeline.getOrderedPolicies().map((p) => p.name);

describe("installResilience", () => {
  it("replaces the SDK's retry policy with ours on a TableClient", () => {
    const client = tableClient();
    expect(names(client)).toContain("defaultRetryPolicy");
    const handle = installResilience(client);
    expect(handle.service).toBe("table");
    expect(names(client)).not.toContain("defaultRetryPolicy");
    expect(names(client).filter((n) => n === resilientRetryPolicyName)).toHaveLength(1);
    expect(handle.removedPolicies.map((p) => p.name)).toContain("defaultRetryPolicy");
  });

  it("dispose restores the SDK's policy and is idempotent", () => {
    const client = tableClient();
    const before = names(client);
    const handle = installResilience(client);
    handle.dispose();
    handle.dispose();
    expect(names(client).sort()).toEqual([...before].sort());
  });

  it("installing twice replaces the first installation", () => {
    const client = tableClient();
    installResilience(client);
    installResilience(client, { retry: { strategy: "none" } });
    expect(names(client).filter((n) => n === resilientRetryPolicyName)).toHaveLength(1);
    expect(names(client)).not.toContain("defaultRetryPolicy");
  });

  it("one 503 makes exactly one request with retries off: no SDK retry nested under ours", async () => {
    const http = countingClient(503, "ServerBusy");
    const client = tableClient(http);
    installResilience(client, { retry: { strategy: "none" } });
    const error = await client.getEntity("p1", "r1").catch((e: unknown) => e);
    expect(http.requests).toHaveLength(1);
    expect(error).toMatchObject({ name: "RestError", statusCode: 503 });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stopReason: "retries-exhausted" });
  });

  it("without it the SDK retries the same 503 (the control for the test above)", async () => {
    const http = countingClient(503, "ServerBusy");
    const client = new TableClient("https://myaccount.table.core.windows.net", "orders", credential, {
      httpClient: http,
      retryOptions: { maxRetries: 1, retryDelayInMs: 1, maxRetryDelayInMs: 1 },
    });
    await client.getEntity("p1", "r1").catch(() => undefined);
    expect(http.requests.length).toBeGreaterThan(1);
  });

  it("counts attempts with the preset's retries on a 503 (fixed fast backoff)", async () => {
    const http = countingClient(503, "ServerBusy");
    const client = tableClient(http);
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 2, delayInMs: 1 } });
    await expect(client.getEntity("p1", "r1")).rejects.toMatchObject({ statusCode: 503 });
    expect(http.requests).toHaveLength(3);
  });

  it("retry given only some numbers completes from the preset, strategy included (exponential)", async () => {
    // No strategy named: the preset's exponential backoff with these numbers (small delays, to run fast).
    const http = countingClient(503, "ServerBusy");
    const client = tableClient(http);
    installResilience(client, { retry: { maxRetries: 2, baseDelayInMs: 1, minDelayInMs: 0, maxDelayInMs: 2 }, circuitBreaker: false });
    await expect(client.getEntity("p1", "r1")).rejects.toMatchObject({ statusCode: 503 });
    expect(http.requests).toHaveLength(3);
    expect(getRetryInfo(await client.getEntity("p1", "r1").catch((error: unknown) => error))).toMatchObject({ attempts: 3 });

    const once = countingClient(503, "ServerBusy");
    const onceClient = tableClient(once);
    installResilience(onceClient, { retry: { maxRetries: 0 }, circuitBreaker: false });
    await expect(onceClient.getEntity("p1", "r1")).rejects.toMatchObject({ statusCode: 503 });
    expect(once.requests).toHaveLength(1);

    // The example: no throw, and the preset's other numbers are kept (the policy is installed).
    const four = tableClient(countingClient(200));
    expect(() => installResilience(four, { retry: { maxRetries: 4 } })).not.toThrow();
    expect(names(four)).toContain(resilientRetryPolicyName);
  });

  it("a bad number in a partial retry gets its own error naming retry.<option> and the value", () => {
    expect(() => installResilience(tableClient(), { retry: { maxRetries: -1 } })).toThrow(new RangeError("retry.maxRetries must be between 0 and 1000; got -1."));
    expect(() => installResilience(tableClient(), { retry: { jitter: 1 } })).toThrow(/^retry\.jitter must be between 0 and 0\.999999; got 1\.$/);
    expect(() => installResilience(tableClient(), { retry: { strategy: "sometimes" } as never })).toThrow(/^retry\.strategy must be one of "none", "fixed", "exponential", "decorrelated"; got "sometimes"\.$/);
  });

  it("a 403 is attempted once", async () => {
    const http = countingClient(403, "AuthorizationFailure");
    const client = tableClient(http);
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 5, delayInMs: 1 } });
    await expect(client.getEntity("p1", "r1")).rejects.toMatchObject({ statusCode: 403 });
    expect(http.requests).toHaveLength(1);
  });

  it("works on a TableServiceClient and on a bare Pipeline", () => {
    const service = new TableServiceClient("https://myaccount.table.core.windows.net", credential);
    expect(installResilience(service).service).toBe("table");
    const pipeline = createPipelineFromOptions({});
    const handle = installResilience(pipeline, { service: "queue" });
    expect(handle.service).toBe("queue");
    expect(pipeline.getOrderedPolicies().map((p) => p.name)).not.toContain("defaultRetryPolicy");
  });

  it("detects the service from a storage host name", () => {
    const pipeline = createEmptyPipeline();
    const target = { url: "https://acct.blob.core.windows.net/container", pipeline };
    expect(installResilience(target).service).toBe("blob");
    expect(installResilience({ url: "https://acct.table.core.chinacloudapi.cn", pipeline }).service).toBe("table");
    expect(installResilience({ url: "https://acct.table.cosmos.azure.com", pipeline }).service).toBe("table");
  });

  it.each([
    ["a TableClient", "blob", "table", () => tableClient()],
    ["a TableClient on Azurite's path-style URL (told by its class)", "queue", "table",
      () => new TableClient("http://127.0.0.1:10002/devstoreaccount1", "orders", credential, { allowInsecureConnection: true })],
    ["a BlobServiceClient", "table", "blob", () => new BlobServiceClient("https://myaccount.blob.core.windows.net")],
    ["a ContainerClient on Azurite", "queue", "blob", () => new ContainerClient("http://127.0.0.1:10000/devstoreaccount1/photos")],
    ["a QueueClient", "blob", "queue", () => new QueueClient("https://myaccount.queue.core.windows.net/jobs")],
  ])("refuses service mismatches: %s installed as %s", (_what, given, actual, make) => {
    const client = make();
    const message = new RegExp(`^service is "${given}", but the target is a ${actual} client`);
    expect(() => installResilience(client, { service: given as never, metrics: false })).toThrow(TypeError);
    expect(() => installResilience(client, { service: given as never, metrics: false })).toThrow(message);
    // Nothing was installed by the refused call; the matching service is accepted.
    const handle = installResilience(client, { service: actual as never, metrics: false });
    expect(handle.service).toBe(actual);
    handle.dispose();
  });

  it("asks for the service when it cannot tell", () => {
    expect(() => installResilience(createEmptyPipeline())).toThrow(/^service is required/);
  });

  it.each([
    [null, /target must be/],
    [{}, /target must be/],
    [{ pipeline: { factories: [] } }, /not an @azure\/core-rest-pipeline Pipeline/],
  ])("rejects target %o", (target, message) => {
    expect(() => installResilience(target)).toThrow(TypeError);
    expect(() => installResilience(target)).toThrow(message);
  });

  it.each([
    [{ service: "file" }, /service must be one of "table", "blob", "queue"; got "file"/],
    [{ maxElapsedInMs: -1 }, /maxElapsedInMs.*-1/],
    [{ tryTimeoutInMs: "5s" }, /tryTimeoutInMs.*"5s"/],
    [{ retry: { strategy: "exponential", jitter: 2 } }, /jitter.*2/],
    [{ retry: { strategy: "exponential", minDelayInMs: 50_000 } }, /minDelayInMs \(50000\).*maxDelayInMs \(10000\)/],
    [{ retries: 3 }, /retries is not a known option/],
    // A typo inside `retry` names what the user wrote (`retry`), not the factory behind it, nor a strategy it did not write.
    [{ retry: { retries: 3 } }, /^retry\.retries is not a known option of retry \(an exponential backoff\); did you mean maxRetries\? Known options are maxRetries, /],
    [{ backoff: { throttled: { strategy: "fixed", retries: 1 } } }, /^backoff\.throttled\.retries is not a known option of backoff\.throttled \(a fixed backoff\);/],
  ])("rejects options %o", (options, message) => {
    expect(() => installResilience(tableClient(), options as never)).toThrow(message);
  });
});
