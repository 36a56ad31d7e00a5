import { afterEach, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { getRetryInfo, installResilience, type InstallResilienceOptions, type LocalWaitEvent, type ResilienceHandle } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// The caller policy (issue 23) end to end: a real TableClient through the rebalancing simulator
// in front of Azurite. An open loop (the default) waits within its deadline at every local
// refusal and loses nothing for a local reason; a budget emptied by a mass reset defers its
// retries instead of failing them; a declared bounded caller waits only in its spare slots.

const env = withTableSimulator({ seed: 23 });
const PARTITIONS = Array.from({ length: 10 }, (_, i) => `p${i}`);
/** Stop reasons of a local refusal: an operation that could have waited. */
const LOCAL = new Set(["circuit-open", "partition-busy", "budget-exhausted", "caller-busy"]);

let handle: ResilienceHandle | undefined;
afterEach(() => {
  handle?.dispose();
  handle = undefined;
  env.simulator.clearFaults();
});

interface Outcome {
  partition: string;
  ok: boolean;
  stopReason: string | undefined;
  retryAfterInMs: number | undefined;
  elapsedInMs: number;
}

async function setUp(options: InstallResilienceOptions): Promise<{ upsert: (partition: string, rowKey: string) => Promise<Outcome>; waits: LocalWaitEvent[] }> {
  const table = uniqueTableName("caller");
  await env.directTableClient(table).createTable();
  const client = env.tableClient(table);
  const waits: LocalWaitEvent[] = [];
  handle = installResilience(client, { metrics: { registry: new Registry() }, observers: [{ onLocalWait: (e) => void waits.push(e) }], ...options });
  const upsert = async (partition: string, rowKey: string): Promise<Outcome> => {
    const started = performance.now();
    return client.upsertEntity({ partitionKey: partition, rowKey }).then(
      () => ({ partition, ok: true, stopReason: undefined, retryAfterInMs: undefined, elapsedInMs: performance.now() - started }),
      (error: unknown) => {
        const info = getRetryInfo(error);
        return { partition, ok: false, stopReason: info?.stopReason, retryAfterInMs: info?.retryAfterInMs, elapsedInMs: performance.now() - started };
      },
    );
  };
  return { upsert, waits };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("the caller policy on a real TableClient", () => {
  it("an open loop, defaults: one partition offline 4 s, one timing out 2.5 s, rare resets: every operation succeeds, none fails for a local reason", async () => {
    const { upsert } = await setUp({});
    env.simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "p0" }, startInMs: 300, durationInMs: 4_000 });
    env.simulator.addFault({ name: "timeouts", kind: "operationTimedOut", delayInMs: 100, match: { partition: "p1" }, startInMs: 300, durationInMs: 2_500 });
    env.simulator.addFault({ name: "resets", kind: "resetBeforeForward", probability: 0.01 });
    // Open loop: each operation its own caller, one started every 5 ms for 3 s whatever the others do.
    const operations: Array<Promise<Outcome>> = [];
    for (let i = 0; i < 600; i++) {
      operations.push(upsert(PARTITIONS[i % PARTITIONS.length] as string, `r${i}`));
      await pause(5);
    }
    const done = await Promise.all(operations);
    const failed = done.filter((d) => !d.ok);
    console.log("caller policy, open loop:", JSON.stringify({ operations: done.length, failed: failed.length, stopReasons: failed.map((f) => f.stopReason) }));
    expect(done.filter((d) => d.partition === "p0").length).toBe(60);
    expect(failed.filter((f) => LOCAL.has(f.stopReason ?? ""))).toEqual([]);
    expect(failed).toEqual([]);
    expect(env.simulator.count({ fault: "serverBusy" })).toBeGreaterThan(0);
  }, 30_000);

  it("a mass reset that empties the retry budget: an open loop's deferred retries succeed; a failFast caller's fail at once", async () => {
    // A small budget: 20 retries in reserve and 0.3 per request, over a 1 s window: 50 of the 100 retries at once.
    // The breaker off: with it, resets on three partitions and more with nothing served take the account out at the
    // fifth, and its probes carry the retries (paced sends, which the budget does not count): the budget is not asked.
    const run = async (options: InstallResilienceOptions) => {
      const { upsert, waits } = await setUp({ retryBudget: { minRetriesPerSecond: 20, windowInMs: 1_000, retryRatio: 0.3 }, circuitBreaker: false, ...options });
      env.simulator.clearFaults();
      // Every first attempt and as many retries reset: a retry that succeeds gives its retry back (refund), so only
      // failing retries can empty the budget whatever the machine's speed (with 100 resets, on a quiet machine the
      // first retries' refunds came back before the last ones asked, and nothing waited).
      env.simulator.addFault({ name: "mass-reset", kind: "resetBeforeForward", count: 200 });
      const done = await Promise.all(Array.from({ length: 100 }, (_, i) => upsert(PARTITIONS[i % PARTITIONS.length] as string, `m${i}`)));
      return { done, budgetWaits: waits.filter((w) => w.reason === "budget" && w.state === "started").length };
    };
    const open = await run({});
    const failFast = await run({ caller: { failFast: true } });
    const summary = (r: Awaited<ReturnType<typeof run>>) => ({ succeeded: r.done.filter((d) => d.ok).length, budgetWaits: r.budgetWaits });
    console.log(
      "caller policy, mass reset:",
      JSON.stringify({ open: summary(open), failFast: summary(failFast), openSlowestInMs: Math.round(Math.max(...open.done.map((d) => d.elapsedInMs))) }),
    );
    expect(open.done.every((d) => d.ok)).toBe(true);
    // 200 retries wanted, 50 allowed at once and the first 100 failing: the rest waited for the budget, which still capped what was sent.
    expect(open.budgetWaits).toBeGreaterThan(0);
    const refused = failFast.done.filter((d) => !d.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) {
      expect(r.stopReason).toBe("budget-exhausted");
      expect(r.retryAfterInMs).toBeGreaterThan(0);
    }
  }, 30_000);

  it("a bounded caller of N = 4 with a partition dead for 2 s: waiters never exceed N - R = 3, the others fail at once with retryAfterInMs, healthy partitions' work runs", async () => {
    const N = 4;
    const { upsert, waits } = await setUp({ caller: { concurrency: N } });
    env.simulator.addFault({ name: "dead", kind: "serverBusy", match: { partition: "p0" }, durationInMs: 2_000 });
    // A pool of N (a semaphore), fed one task every 10 ms for 2 s: below saturation while healthy.
    let free = N;
    const queued: Array<() => void> = [];
    const slot = async (): Promise<void> => {
      if (free > 0) {
        free -= 1;
        return;
      }
      await new Promise<void>((resolve) => queued.push(resolve));
    };
    const release = (): void => {
      const next = queued.shift();
      if (next === undefined) free += 1;
      else next();
    };
    let waiting = 0;
    let mostWaiting = 0;
    const tasks: Array<Promise<Outcome>> = [];
    for (let i = 0; i < 200; i++) {
      const partition = PARTITIONS[i % 5] as string;
      tasks.push(
        (async () => {
          await slot();
          try {
            return await upsert(partition, `b${i}`);
          } finally {
            release();
          }
        })(),
      );
      mostWaiting = Math.max(mostWaiting, waiting);
      await pause(10);
    }
    const done = await Promise.all(tasks);
    // Operations waiting at once, from the observer's events.
    for (const w of waits) {
      waiting += w.state === "started" ? 1 : -1;
      mostWaiting = Math.max(mostWaiting, waiting);
    }
    const dead = done.filter((d) => d.partition === "p0");
    const healthy = done.filter((d) => d.partition !== "p0");
    const atOnce = dead.filter((d) => !d.ok && d.elapsedInMs < 50);
    console.log(
      "caller policy, bounded N = 4:",
      JSON.stringify({ healthy: healthy.length, healthyOk: healthy.filter((d) => d.ok).length, dead: dead.length, deadFailedAtOnce: atOnce.length, mostWaiting }),
    );
    expect(healthy.every((d) => d.ok)).toBe(true);
    expect(mostWaiting).toBeLessThanOrEqual(N - 1);
    // A dead partition's operation either waited in a spare slot until it came back, or failed at once with when to come back.
    for (const d of dead.filter((x) => !x.ok)) {
      expect(LOCAL.has(d.stopReason ?? "") || d.stopReason === "retries-exhausted", String(d.stopReason)).toBe(true);
      if (LOCAL.has(d.stopReason ?? "")) expect(d.retryAfterInMs).toBeGreaterThan(0);
    }
    expect(atOnce.length).toBeGreaterThan(0);
  }, 30_000);
});
