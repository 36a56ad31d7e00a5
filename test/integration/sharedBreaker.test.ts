import { afterEach, describe, expect, it } from "vitest";
import { createPartitionBreaker, installResilience, isCircuitOpenError, type PartitionBreaker } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// Issue 18, item 3: clients made per request (or per Functions invocation) share what they
// learn about a partition when they share a breaker; disposing one client leaves it to its owner.

const env = withTableSimulator({ seed: 18 });
let breaker: PartitionBreaker | undefined;
afterEach(() => {
  breaker?.dispose();
  env.simulator.clearFaults();
});

describe("a breaker shared by several clients", () => {
  it("a circuit opened through one client refuses the other client's attempts at once, and outlives the first client's dispose()", async () => {
    const table = uniqueTableName("shared");
    await env.directTableClient(table).createTable();
    breaker = createPartitionBreaker();
    const first = env.tableClient(table);
    const second = env.tableClient(table);
    const firstHandle = installResilience(first, { circuitBreaker: breaker, caller: { failFast: true }, retry: { strategy: "none" } });
    const secondHandle = installResilience(second, { circuitBreaker: breaker, caller: { failFast: true }, retry: { strategy: "none" } });
    expect(firstHandle.circuitBreaker).toBe(breaker);
    expect(secondHandle.circuitBreaker).toBe(breaker);

    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { partition: "hot" } });
    // Through the first client only: writes to the moving partition, spaced, until its circuit opens.
    for (let i = 0; i < 40 && breaker.openScopes().length === 0; i++) {
      await first.upsertEntity({ partitionKey: "hot", rowKey: `a${i}` }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(breaker.openScopes()).toEqual([`table|devstoreaccount1|${table}|hot`]);

    // The second client never sent anything to it, and is refused without a request.
    const before = env.simulator.count({ partition: "hot" });
    const refused = await second.upsertEntity({ partitionKey: "hot", rowKey: "b0" }).catch((error: unknown) => error);
    expect(isCircuitOpenError(refused)).toBe(true);
    expect(env.simulator.count({ partition: "hot" })).toBe(before);
    expect(secondHandle.partitionStatus(table, "hot")).toMatchObject({ state: "open", available: false });
    // Its other partitions are untouched.
    await second.upsertEntity({ partitionKey: "cool", rowKey: "b1" });

    // Disposing the first client leaves the shared breaker to its owner.
    firstHandle.dispose();
    const stillRefused = await second.upsertEntity({ partitionKey: "hot", rowKey: "b2" }).catch((error: unknown) => error);
    expect(isCircuitOpenError(stillRefused)).toBe(true);
    secondHandle.dispose();
    expect(breaker.openScopes()).toHaveLength(1);
  });
});
