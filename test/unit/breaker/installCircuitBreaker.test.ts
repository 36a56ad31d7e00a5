import { afterEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient } from "@azure/core-rest-pipeline";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
import { fixedBackoff, installResilience, isCircuitOpenError } from "../../../src/index.js";
import { hotPartitionHttpClient } from "../../support/hotPartitionHttpClient.js";

function tableClient(httpClient?: HttpClient): TableClient {
  const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
  return new TableClient("https://myaccount.table.core.windows.net", "orders", credential, { httpClient });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("installResilience: circuitBreaker", () => {
  it("is on by default and exposed on the handle; dispose() disposes it", () => {
    const handle = installResilience(tableClient());
    handle.dispose();
    expect(handle.circuitBreaker?.size).toBe(0);
  });

  it("false turns it off; anything but an object or false is rejected by name", () => {
    expect(installResilience(tableClient(), { circuitBreaker: false }).circuitBreaker).toBeUndefined();
    expect(() => installResilience(tableClient(), { circuitBreaker: true as unknown as false })).toThrow(
      /circuitBreaker must be an options object or false; got true/,
    );
    expect(() => installResilience(tableClient(), { circuitBreaker: { resetTimeoutInMs: -1 } })).toThrow(RangeError);
    expect(() => installResilience(tableClient(), { circuitBreaker: { bogus: 1 } as never })).toThrow(/bogus is not a known option/);
  });

  it("gates the client's requests per partition: a failFast caller gets CircuitOpenError with no request sent", async () => {
    vi.useFakeTimers();
    const http = hotPartitionHttpClient();
    const client = tableClient(http);
    // Retries 100 ms apart: the 5th failure in a row comes after the partition has served nothing for 250 ms.
    const handle = installResilience(client, {
      retry: fixedBackoff({ maxRetries: 12, delayInMs: 100 }),
      // A probe period longer than the second the test waits: the circuit is still open when asked.
      circuitBreaker: { consecutiveFailures: 5, resetTimeoutInMs: 3_000 },
      caller: { failFast: true },
    });
    try {
      // The circuit opens during this operation; with a real 503 in hand the policy surfaces that.
      const first = expect(client.upsertEntity({ partitionKey: "hot", rowKey: "r" })).rejects.toMatchObject({ statusCode: 503 });
      await vi.advanceTimersByTimeAsync(1_000);
      await first;
      expect(http.requests).toHaveLength(5);
      expect(handle.circuitBreaker?.openScopes()).toEqual(["table|myaccount|orders|hot"]);
      const sent = http.requests.length;
      await expect(client.upsertEntity({ partitionKey: "hot", rowKey: "r2" })).rejects.toSatisfy(isCircuitOpenError);
      expect(http.requests).toHaveLength(sent);
      await client.upsertEntity({ partitionKey: "cool", rowKey: "r" });
      expect(http.requests.length).toBe(sent + 1);
    } finally {
      handle.dispose();
    }
  });
});

describe("installResilience: circuit scopes of real SDK requests", () => {
  it("scopes a TableClient's insert, upsert and $batch by PartitionKey (bodies as the SDK sends them)", async () => {
    const http: HttpClient = {
      async sendRequest(request) {
        // One rebalancing failure each: it gives the scope a circuit, which the test looks up.
        return { request, status: 503, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) };
      },
    };
    const client = tableClient(http);
    const handle = installResilience(client, { retry: { strategy: "none" } });
    try {
      await client.createEntity({ partitionKey: "inserted", rowKey: "r" }).catch(() => undefined);
      await client.upsertEntity({ partitionKey: "upserted", rowKey: "r" }).catch(() => undefined);
      await client.submitTransaction([["create", { partitionKey: "batched", rowKey: "r" }]]).catch(() => undefined);
      for (const pk of ["inserted", "upserted", "batched"]) {
        expect(handle.circuitBreaker?.stateOf(`table|myaccount|orders|${pk}`), pk).toBe("closed");
      }
    } finally {
      handle.dispose();
    }
  });
});
