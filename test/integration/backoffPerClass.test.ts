import { beforeEach, describe, expect, it } from "vitest";
import type { TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { decorrelatedJitterBackoff, installResilience, type InstallResilienceOptions, type RetryEvent } from "../../src/index.js";
import { mulberry32 } from "../../src/testing/simulator/mulberry32.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// Backoff per outcome class (issue 18, item 2) on real components: the real TableClient,
// real Azurite, the simulator resetting connections, throttling and timing out. What is
// asserted is what the policy decided (each retry's class and wait, from onRetry) and what
// the simulator and the store saw, not how long anything took.

const env = withTableSimulator({ seed: 18 });
let table: string;
let client: TableClient;

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("backoff");
  await env.directTableClient(table).createTable();
  env.simulator.resetRecords();
  client = env.tableClient(table);
});

/** Installs with the table preset (and whatever `options` change), recording every retry. */
function install(options: InstallResilienceOptions = {}): RetryEvent[] {
  const retries: RetryEvent[] = [];
  installResilience(client, { metrics: { registry: new Registry() }, observers: [{ onRetry: (event) => retries.push(event) }], ...options });
  return retries;
}

const waits = (retries: RetryEvent[]) => retries.map((r) => [r.reason, r.delayInMs] as const);

describe("backoff per outcome class, table preset, real TableClient", () => {
  it("a connection reset is retried within tens of milliseconds, twice, and the write lands", async () => {
    const retries = install();
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "p1" }, count: 2 });
    await client.createEntity({ partitionKey: "p1", rowKey: "r1", value: 1 });
    expect(env.simulator.count({ partition: "p1", fault: "resetBeforeForward" })).toBe(2);
    expect(env.simulator.count({ partition: "p1" })).toBe(3);
    const [first, second] = retries;
    expect(retries.map((r) => r.reason)).toEqual(["transient", "transient"]);
    // The guidance's formula from 40 ms: 42-58 ms, then 106-154 ms.
    expect(first?.delayInMs).toBeGreaterThanOrEqual(42);
    expect(first?.delayInMs).toBeLessThanOrEqual(58);
    expect(second?.delayInMs).toBeGreaterThanOrEqual(106);
    expect(second?.delayInMs).toBeLessThanOrEqual(154);
    expect((await env.directTableClient(table).getEntity<{ value: number }>("p1", "r1")).value).toBe(1);
  });

  it("the same reset waited 675 ms or more with one backoff for every class (backoff: {})", async () => {
    const retries = install({ backoff: {} });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "p1" }, count: 1 });
    await client.createEntity({ partitionKey: "p1", rowKey: "r1" });
    expect(waits(retries)).toHaveLength(1);
    expect(retries[0]?.delayInMs).toBeGreaterThanOrEqual(675);
    expect(retries[0]?.delayInMs).toBeLessThanOrEqual(825);
  });

  it("a throttle and a timeout keep the guidance's backoff", async () => {
    const retries = install();
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p2" }, count: 1 });
    env.simulator.addFault({ kind: "operationTimedOut", delayInMs: 50, match: { partition: "p3" }, count: 1 });
    await client.upsertEntity({ partitionKey: "p2", rowKey: "r1" });
    await client.upsertEntity({ partitionKey: "p3", rowKey: "r1" });
    const [throttled, timeout] = retries;
    expect(throttled?.reason).toBe("throttled");
    expect(throttled?.delayInMs).toBeGreaterThanOrEqual(675);
    expect(throttled?.delayInMs).toBeLessThanOrEqual(825);
    expect(timeout?.reason).toBe("timeout");
    expect(timeout?.delayInMs).toBeGreaterThanOrEqual(675);
    expect(timeout?.delayInMs).toBeLessThanOrEqual(825);
    expect(env.simulator.count({ partition: "p2" })).toBe(2);
    expect(env.simulator.count({ partition: "p3" })).toBe(2);
  });

  it("a reset after a throttle starts the reset curve at its first retry", async () => {
    const retries = install();
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "p4" }, count: 1 });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "p4" }, count: 1 });
    await client.upsertEntity({ partitionKey: "p4", rowKey: "r1" });
    expect(retries.map((r) => r.reason)).toEqual(["throttled", "transient"]);
    // One backoff for every class would make it the second retry: 1275 ms or more.
    expect(retries[1]?.delayInMs).toBeGreaterThanOrEqual(42);
    expect(retries[1]?.delayInMs).toBeLessThanOrEqual(58);
  });

  it("decorrelated jitter for resets, seeded: each wait in [base, 3 x the last], the operation succeeds", async () => {
    const retries = install({ backoff: { transient: decorrelatedJitterBackoff({ baseDelayInMs: 20, maxDelayInMs: 200, random: mulberry32(5) }) } });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "p5" }, count: 3 });
    await client.createEntity({ partitionKey: "p5", rowKey: "r1" });
    const delays = retries.map((r) => r.delayInMs);
    expect(retries.map((r) => r.reason)).toEqual(["transient", "transient", "transient"]);
    let previous = 20;
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(20);
      expect(delay).toBeLessThanOrEqual(Math.min(200, 3 * previous));
      previous = delay;
    }
    expect(env.simulator.count({ partition: "p5" })).toBe(4);
    await expect(env.directTableClient(table).getEntity("p5", "r1")).resolves.toMatchObject({ rowKey: "r1" });
  });
});
