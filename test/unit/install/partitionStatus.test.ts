import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import { QueueClient } from "@azure/storage-queue";
import { ContainerClient } from "@azure/storage-blob";
import { installResilience, type ResilienceHandle } from "../../../src/index.js";

// Issue 16: a dispatcher asks before it sends. The answer follows what the partition did.

const credential = new AzureNamedKeyCredential("devstoreaccount1", Buffer.from("key").toString("base64"));
let handles: ResilienceHandle[] = [];

beforeEach(() => vi.useFakeTimers());
afterEach(() => {
  for (const h of handles) h.dispose();
  handles = [];
  vi.useRealTimers();
});

/** A transport answering every request with `status` (503 ServerBusy for trouble). */
function answering(status: () => number): HttpClient {
  return {
    sendRequest: async (request: PipelineRequest) => ({
      request,
      status: status(),
      headers: createHttpHeaders(status() === 503 ? { "x-ms-error-code": "ServerBusy" } : {}),
    }),
  };
}

describe("handle.partitionStatus", () => {
  it("says healthy, then open with retryAfterInMs once the partition served nothing, for a TableClient on Azurite's path-style URL", async () => {
    let status = 204;
    const client = new TableClient("http://127.0.0.1:10002/devstoreaccount1", "orders", credential, {
      allowInsecureConnection: true,
      httpClient: answering(() => status),
    });
    const handle = installResilience(client, { caller: { failFast: true }, retry: { strategy: "none" } });
    handles.push(handle);
    expect(handle.partitionStatus("orders", "p1")).toEqual({ state: "healthy", available: true, retryAfterInMs: 0 });
    status = 503;
    for (let i = 0; i < 6; i++) {
      await client.upsertEntity({ partitionKey: "p1", rowKey: `r${i}` }).catch(() => undefined);
      await vi.advanceTimersByTimeAsync(60);
    }
    const open = handle.partitionStatus("orders", "p1");
    expect(open).toMatchObject({ state: "open", available: false });
    expect(open.retryAfterInMs).toBeGreaterThan(0);
    expect(open.retryAfterInMs).toBeLessThanOrEqual(3000);
    expect(handle.partitionStatus("orders", "p2").available).toBe(true);
    await vi.advanceTimersByTimeAsync(3000);
    expect(handle.partitionStatus("orders", "p1")).toMatchObject({ state: "half_open", available: true });
  });

  it("reads the account of Blob and Queue clients too, and asks the breaker under the partition's scope key", () => {
    const blobHandle = installResilience(new ContainerClient("http://127.0.0.1:10000/devstoreaccount1/photos"));
    const queueHandle = installResilience(new QueueClient("http://127.0.0.1:10001/devstoreaccount1/jobs"));
    handles.push(blobHandle, queueHandle);
    const blobAsked = vi.spyOn(blobHandle.circuitBreaker!, "statusOf");
    const queueAsked = vi.spyOn(queueHandle.circuitBreaker!, "statusOf");
    expect(blobHandle.partitionStatus("photos", "a.jpg")).toMatchObject({ state: "healthy", available: true });
    expect(queueHandle.partitionStatus("jobs")).toMatchObject({ state: "healthy", available: true });
    expect(blobAsked).toHaveBeenCalledWith("blob|devstoreaccount1|photos|a.jpg");
    expect(queueAsked).toHaveBeenCalledWith("queue|devstoreaccount1|jobs");
    expect(() => queueHandle.partitionStatus(null as never)).toThrow(/resource must be a string/);
  });
});
