import { beforeEach, describe, expect, it } from "vitest";
import type { TableClient } from "@azure/data-tables";
import { getRetryInfo, installResilience, type RetryEvent } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// The core issue's end-to-end checks: the real TableClient, real Azurite, the simulator
// in front of it injecting rebalancing faults; attempts are counted at the simulator.

const env = withTableSimulator({ seed: 7 });
let table: string;
let client: TableClient;

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("retry");
  await env.directTableClient(table).createTable();
  env.simulator.resetRecords();
  // The SDK's own retry left at its default (3 retries): installResilience must remove it.
  client = env.tableClient(table, { retryOptions: { maxRetries: 3 } });
});

const fast = { strategy: "fixed", maxRetries: 5, delayInMs: 20 } as const;

describe("resilient retries on a real TableClient", () => {
  it("503 ServerBusy twice then success: 3 attempts and success", async () => {
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1" }, count: 2 });
    await client.createEntity({ partitionKey: "p1", rowKey: "r1", value: 1 });
    expect(env.simulator.count({ partition: "p1" })).toBe(3);
    const stored = await env.directTableClient(table).getEntity<{ value: number }>("p1", "r1");
    expect(stored.value).toBe(1);
  });

  it.each([
    [403, "AuthorizationFailure"],
    [501, "NotImplemented"],
  ])("%i is attempted once", async (status, errorCode) => {
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "status", status, errorCode, match: { partition: "p1" } });
    const error = await client.createEntity({ partitionKey: "p1", rowKey: "r1" }).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RestError", statusCode: status });
    expect(env.simulator.count({ partition: "p1" })).toBe(1);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stopReason: "permanent" });
  });

  it("retries a connection reset before the request reached the store", async () => {
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "p1" }, count: 1 });
    await client.createEntity({ partitionKey: "p1", rowKey: "r1" });
    expect(env.simulator.count({ partition: "p1" })).toBe(2);
    expect(env.simulator.count({ partition: "p1", fault: "resetBeforeForward" })).toBe(1);
  });

  it("waits for Retry-After", async () => {
    const retries: RetryEvent[] = [];
    installResilience(client, {
      retry: { strategy: "fixed", maxRetries: 3, delayInMs: 10 },
      maxRetryAfterInMs: 5000,
      observers: [{ onRetry: (event) => retries.push(event) }],
    });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1" }, count: 1, retryAfter: { seconds: 1 } });
    const started = performance.now();
    await client.createEntity({ partitionKey: "p1", rowKey: "r1" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(1000);
    expect(retries.map((r) => [r.delayInMs, r.delaySource])).toEqual([[1000, "retry-after"]]);
    expect(env.simulator.count({ partition: "p1" })).toBe(2);
  });

  it("an abort during a backoff rejects promptly, with no further attempt", async () => {
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 5, delayInMs: 30_000 } });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1" } });
    const controller = new AbortController();
    const started = performance.now();
    const pending = client.createEntity({ partitionKey: "p1", rowKey: "r1" }, { abortSignal: controller.signal });
    while (env.simulator.count({ partition: "p1" }) < 1) await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    // Far below the 30 s backoff it interrupted.
    expect(performance.now() - started).toBeLessThan(10_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(env.simulator.count({ partition: "p1" })).toBe(1);
  });

  it("the SDK's own retry is gone: with retries off, one 503 is one request at the wire", async () => {
    installResilience(client, { retry: { strategy: "none" } });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1" } });
    await expect(client.createEntity({ partitionKey: "p1", rowKey: "r1" })).rejects.toMatchObject({ statusCode: 503 });
    expect(env.simulator.count({ partition: "p1" })).toBe(1);
  });

  it("(control) without it the SDK's default retry sends the 503 again", async () => {
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p1" } });
    const sdkOnly = env.tableClient(table, { retryOptions: { maxRetries: 1, retryDelayInMs: 10, maxRetryDelayInMs: 10 } });
    await expect(sdkOnly.createEntity({ partitionKey: "p1", rowKey: "r1" })).rejects.toMatchObject({ statusCode: 503 });
    expect(env.simulator.count({ partition: "p1" })).toBe(2);
  });

  it("a partition offline for 10 s with default options: every write succeeds", async () => {
    installResilience(client);
    env.simulator.addFault({ name: "rebalancing", kind: "serverBusy", match: { partition: "hot" }, durationInMs: 10_000 });
    // Writes start before and throughout the outage, one every 500 ms; some to healthy partitions.
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < 20; i++) {
      const partitionKey = i % 4 === 3 ? "cool" : "hot";
      writes.push(client.createEntity({ partitionKey, rowKey: `r${i}`, i }));
      await new Promise((r) => setTimeout(r, 500));
    }
    const results = await Promise.allSettled(writes);
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    const stored = [];
    for await (const entity of env.directTableClient(table).listEntities()) stored.push(entity.rowKey);
    expect(stored.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `r${i}`).sort());
    const refused = env.simulator.count({ ruleName: "rebalancing" });
    console.info(`offline 10 s: ${refused} attempts refused with 503, ${env.simulator.count({ partition: "hot" })} attempts on the hot partition for 15 writes`);
    // The outage was real (the breaker, on by default, keeps most attempts off the partition).
    expect(refused).toBeGreaterThan(0);
    expect(env.simulator.count({ partition: "cool", fault: "serverBusy" })).toBe(0);
  }, 90_000);
});
