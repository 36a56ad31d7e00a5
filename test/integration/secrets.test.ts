import { inspect, format } from "node:util";
import { AzureNamedKeyCredential, AzureSASCredential, TableClient, generateTableSas, type TableServiceClientOptions } from "@azure/data-tables";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getRetryInfo, installResilience, type OperationEvent } from "../../src/index.js";
import { captureAzureLog, type AzureLogCapture } from "../support/captureAzureLog.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// A faulty workload with a shared key and with SAS (credential and URL); everything the
// package and the SDK produce is captured and scanned for the account key, the SAS
// signature and the Authorization header values that went over the wire.

const env = withTableSimulator({ seed: 3 });
const table = uniqueTableName("secrets");
const captured: string[] = [];
const authorizations = new Set<string>();
let logCapture: AzureLogCapture | undefined;

/** Records every Authorization header after signing, to look for it afterwards. */
const authorizationSpy: PipelinePolicy = {
  name: "authorizationSpy",
  sendRequest(request, next) {
    const value = request.headers.get("authorization");
    if (value) authorizations.add(value);
    return next(request);
  },
};

beforeAll(async () => {
  logCapture = captureAzureLog("verbose", captured, format);
  await env.directTableClient(table).createTable();
});

afterAll(() => {
  logCapture?.stop();
});

/** Runs a mixed, faulty workload on `client` and captures errors, retry info and observer events. */
async function faultyWorkload(client: TableClient, registry: Registry, tag: string): Promise<void> {
  const events: OperationEvent[] = [];
  client.pipeline.addPolicy(authorizationSpy, { afterPhase: "Sign" });
  installResilience(client, {
    retry: { strategy: "fixed", maxRetries: 3, delayInMs: 10 },
    tryTimeoutInMs: 300,
    metrics: { registry, partitionLabel: { topN: 5, minThrottles: 1 } },
    circuitBreaker: false,
    observers: [{ onOperationEnd: (e) => events.push(e) }],
  });
  const sim = env.simulator;
  sim.clearFaults();
  sim.addFault({ kind: "serverBusy", match: { partition: `${tag}-busy` }, retryAfter: { ms: 5 } });
  sim.addFault({ kind: "status", status: 403, errorCode: "AuthorizationFailure", match: { partition: `${tag}-denied` } });
  sim.addFault({ kind: "resetAfterForward", match: { partition: `${tag}-mixed` }, probability: 0.3 });
  sim.addFault({ kind: "resetBeforeForward", match: { partition: `${tag}-mixed` }, probability: 0.2 });
  sim.addFault({ kind: "operationTimedOut", match: { partition: `${tag}-mixed` }, probability: 0.2 });
  sim.addFault({ kind: "slow", delayInMs: 600, match: { partition: `${tag}-mixed` }, probability: 0.1 });
  const operations: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < 12; i++) {
    const pk = `${tag}-mixed`;
    operations.push(() => client.createEntity({ partitionKey: pk, rowKey: `c${i}`, i }));
    operations.push(() => client.upsertEntity({ partitionKey: pk, rowKey: `u${i}`, i }, "Replace"));
    operations.push(() => client.getEntity(pk, `c${i}`));
    operations.push(() => client.deleteEntity(pk, `u${i}`));
    operations.push(() => client.submitTransaction([["upsert", { partitionKey: pk, rowKey: `b${i}`, i }]]));
  }
  operations.push(() => client.createEntity({ partitionKey: `${tag}-busy`, rowKey: "x" }));
  operations.push(() => client.createEntity({ partitionKey: `${tag}-denied`, rowKey: "x" }));
  operations.push(async () => {
    for await (const entity of client.listEntities({ queryOptions: { filter: `PartitionKey eq '${tag}-busy'` } })) void entity;
  });
  for (const operation of operations) {
    try {
      await operation();
    } catch (error) {
      captured.push(String(error), (error as Error)?.message ?? "", (error as Error)?.stack ?? "");
      captured.push(JSON.stringify(error) ?? "", inspect(error, { depth: 8 }), inspect(error, { depth: 8, showHidden: true }));
      captured.push(JSON.stringify(getRetryInfo(error) ?? {}));
    }
  }
  // Then with the breaker failing fast: CircuitOpenErrors name partition scopes, never credentials.
  installResilience(client, { retry: { strategy: "none" }, metrics: { registry }, caller: { failFast: true } });
  for (let i = 0; i < 30; i++) {
    // Spaced, so the partition has served nothing for long enough to open its circuit.
    await new Promise((resolve) => setTimeout(resolve, 15));
    await client.createEntity({ partitionKey: `${tag}-busy`, rowKey: `o${i}` }).catch((error: unknown) => {
      captured.push(String(error), JSON.stringify(error) ?? "", inspect(error, { depth: 8 }), JSON.stringify(getRetryInfo(error) ?? {}));
    });
  }
  for (const event of events) captured.push(JSON.stringify({ ...event, request: undefined, response: undefined, error: String(event.error) }));
  captured.push(JSON.stringify(sim.records));
  sim.clearFaults();
}

describe("no secrets in anything produced", () => {
  it("shared key, SAS credential and SAS URL: errors, logs, metrics, retry info", async () => {
    const key = env.azurite.accountKey;
    const sas = generateTableSas(table, new AzureNamedKeyCredential(env.azurite.accountName, key), {
      permissions: { add: true, query: true, update: true, delete: true },
      expiresOn: new Date(Date.now() + 3600_000),
    });
    const sig = new URLSearchParams(sas).get("sig");
    expect(sig).toBeTruthy();
    const options: TableServiceClientOptions = { allowInsecureConnection: true, retryOptions: { maxRetries: 0 } };
    const registry = new Registry();

    await faultyWorkload(env.tableClient(table), registry, "key");
    await faultyWorkload(new TableClient(env.proxyTableUrl, table, new AzureSASCredential(sas), options), registry, "sas");
    await faultyWorkload(new TableClient(`${env.proxyTableUrl}?${sas}`, table, options), registry, "url");
    captured.push(await registry.metrics());

    const text = captured.join("\n");
    // The workload really ran and failed in the ways it should have.
    expect(text).toContain("AuthorizationFailure");
    expect(text).toContain("ServerBusy");
    expect(text).toContain("CircuitOpenError");
    expect(captured.length).toBeGreaterThan(100);
    expect(authorizations.size).toBeGreaterThan(10);

    const needles: Array<[string, string]> = [
      ["account key", key],
      ["SAS sig", sig!],
      ["SAS sig, URL-encoded", encodeURIComponent(sig!)],
    ];
    for (const value of authorizations) {
      needles.push(["Authorization header", value]);
      needles.push(["Authorization signature", value.slice(value.lastIndexOf(":") + 1)]);
    }
    const leaks = needles.filter(([, needle]) => needle.length >= 8 && text.includes(needle)).map(([name]) => name);
    console.info(
      `secrets scan: ${captured.length} captured texts (${Math.round(text.length / 1024)} KiB), ` +
        `${authorizations.size} Authorization values, ${needles.length} needles, ${leaks.length} leaks`,
    );
    expect(leaks).toEqual([]);
    expect(text).not.toMatch(/SharedKey(Lite)? [^\s:"']+:[A-Za-z0-9+/=]{20,}/);
    expect(text).not.toMatch(/[?&]sig=(?!REDACTED)[^&\s"']+/);
  }, 120_000);
});
