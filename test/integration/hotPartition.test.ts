import { afterEach, describe, expect, it } from "vitest";
import { installResilience, type ResilienceHandle } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// Issue 15 end to end: a real TableClient, real Azurite, the simulator holding one partition
// to a rate (a *hot* partition: it keeps serving at capacity and answers 503 ServerBusy for
// the excess). Open loop: operations start on schedule whatever the others are doing.

const env = withTableSimulator({ seed: 15 });
const DURATION_IN_MS = 4_000;
const HOT_OPS_PER_SECOND = 100;
const COOL_OPS_PER_SECOND = 100;
const HOT_CAPACITY_PER_SECOND = 50;
const COOL = Array.from({ length: 9 }, (_, i) => `cool${i}`);

let handle: ResilienceHandle | undefined;
afterEach(() => {
  handle?.dispose();
  env.simulator.clearFaults();
});

interface Outcome {
  partition: string;
  ok: boolean;
  doneAt: number;
}

describe("a hot partition, with installResilience defaults", () => {
  it("is served at its capacity: nearly every operation succeeds, few attempts are throttled, the others are untouched", async (ctx) => {
    const table = uniqueTableName("hot");
    await env.directTableClient(table).createTable();
    const client = env.tableClient(table);
    handle = installResilience(client);
    env.simulator.addFault({ name: "hot", kind: "throttle", match: { partition: "hot" }, ratePerSecond: HOT_CAPACITY_PER_SECOND });
    env.simulator.resetRecords();

    const started = Date.now();
    const operations: Array<Promise<Outcome>> = [];
    const schedule = (partition: string, atInMs: number, n: number): void => {
      operations.push(
        (async () => {
          await new Promise((resolve) => setTimeout(resolve, atInMs));
          const ok = await client.upsertEntity({ partitionKey: partition, rowKey: `r${n}`, n }).then(
            () => true,
            () => false,
          );
          return { partition, ok, doneAt: Date.now() - started };
        })(),
      );
    };
    const hotOps = (HOT_OPS_PER_SECOND * DURATION_IN_MS) / 1000;
    const coolOps = (COOL_OPS_PER_SECOND * DURATION_IN_MS) / 1000;
    for (let i = 0; i < hotOps; i++) schedule("hot", (i * 1000) / HOT_OPS_PER_SECOND, i);
    for (let i = 0; i < coolOps; i++) schedule(COOL[i % COOL.length] as string, (i * 1000) / COOL_OPS_PER_SECOND, i);
    // The scopes paced at any moment while operations arrive (once they stop, a limit with no demand left lifts).
    const pacedSeen = new Set<string>();
    const sampler = setInterval(() => {
      for (const p of handle?.circuitBreaker?.pacedScopes() ?? []) pacedSeen.add(p.scope);
    }, 100);
    const outcomes = await Promise.all(operations);
    clearInterval(sampler);

    const hot = outcomes.filter((o) => o.partition === "hot");
    const cool = outcomes.filter((o) => o.partition !== "hot");
    const hotAttempts = env.simulator.count({ partition: "hot" });
    const hotThrottled = env.simulator.count({ partition: "hot", fault: "throttle" });
    const lastHotDoneAt = Math.max(...hot.map((o) => o.doneAt));
    const lastCoolDoneAt = Math.max(...cool.map((o) => o.doneAt));
    const coolAttempts = COOL.reduce((sum, pk) => sum + env.simulator.count({ partition: pk }), 0);
    const summary = {
      hotOk: hot.filter((o) => o.ok).length,
      hotOps,
      hotAttempts,
      hotThrottled,
      lastHotDoneAt,
      lastCoolDoneAt,
      coolOk: cool.filter((o) => o.ok).length,
      coolAttempts,
    };
    console.log("hot partition:", JSON.stringify(summary));

    // The scenario itself: the hot partition was offered more than its capacity. A machine too loaded
    // to serve even the unpaced partitions 50 requests a second makes no hot partition, and nothing
    // below can be shown: skipped, and said so (seen at a load average of 16 on two cores). Not when
    // the unpaced ones got that rate: then a hot partition never throttled was held back by us.
    const hotRate = (hotOps * 1000) / lastHotDoneAt;
    const coolRate = (coolOps * 1000) / lastCoolDoneAt;
    if (hotThrottled === 0 && coolRate < HOT_CAPACITY_PER_SECOND) {
      console.warn(`hot partition: skipped; this machine served the unpaced partitions ${Math.round(coolRate)} requests a second, below the hot one's capacity`);
      ctx.skip();
    }
    expect(summary.hotOk).toBeGreaterThanOrEqual(0.98 * hotOps);
    // Few attempts throttled: pacing's share, with room for a loaded machine, whose late timers send
    // paced slots in bunches (with two busy loops beside it: up to 1.31x attempts, 24 % throttled;
    // npm run bench on a quiet one: 1.19x, 16 %). Pacing off in this same test: 1.74x, 42 %.
    expect(hotAttempts).toBeLessThanOrEqual(1.5 * hotOps);
    expect(hotThrottled).toBeLessThanOrEqual(0.3 * hotAttempts);
    // Served at capacity, not paced below it: at least half the capacity, or half the rate this machine
    // served the unpaced partitions at in the same run when that is less (offered 100/s like the hot
    // one, they finish in about 4 s on a quiet machine; a loaded one serves everyone slower, and the
    // same load meets both). On a quiet machine this asks what it always asked: the hot operations
    // done within twice hotOps / capacity.
    expect(hotRate).toBeGreaterThanOrEqual(0.5 * Math.min(HOT_CAPACITY_PER_SECOND, coolRate));
    expect(summary.coolOk).toBe(coolOps);
    // The other partitions were neither paced nor retried: one attempt per operation.
    expect(coolAttempts).toBe(coolOps);
    // Paced while it was offered more than its capacity, and the only scope ever paced (no cool partition, not the account).
    expect([...pacedSeen]).toEqual([expect.stringMatching(/\|hot$/)]);
    // Served at capacity, never taken for a partition that serves nothing.
    expect(handle.circuitBreaker?.openScopes()).toEqual([]);
  });
});
