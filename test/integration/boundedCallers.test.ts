import { afterEach, describe, expect, it } from "vitest";
import { installResilience, type CallerOptions, type ResilienceHandle } from "../../src/index.js";
import { isPossiblyApplied } from "../support/possiblyApplied.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// Issue 16 end to end: 16 closed-loop workers (a worker pool: each runs one operation after
// another) drive a real TableClient through the simulator in front of Azurite, over ten
// partitions; one goes offline (503 ServerBusy), another times out (500 OperationTimedOut
// after a delay). A worker held waiting on a troubled partition is one the others lose.

const env = withTableSimulator({ seed: 16 });
const WORKERS = 16;
const PARTITIONS = Array.from({ length: 10 }, (_, i) => `p${i}`);
const OFFLINE = "p0";
const TIMING_OUT = "p1";
const BEFORE_IN_MS = 1_500;
const OUTAGE_IN_MS = 3_000;
const AFTER_IN_MS = 1_000;

let handles: ResilienceHandle[] = [];
afterEach(() => {
  for (const h of handles) h.dispose();
  handles = [];
  env.simulator.clearFaults();
});

interface Done {
  partition: string;
  rowKey: string;
  ok: boolean;
  possiblyApplied: boolean;
  startedAt: number;
  doneAt: number;
}

/** A pool's own table and installed client, warmed up (connections, JIT) so its "before" rate is the steady one. */
async function preparePool(caller: CallerOptions): Promise<{ client: ReturnType<typeof env.tableClient>; table: string }> {
  const table = uniqueTableName(`bounded${caller.failFast === true ? "failfast" : "declared"}`);
  await env.directTableClient(table).createTable();
  const client = env.tableClient(table);
  handles.push(installResilience(client, { caller }));
  await Promise.all(Array.from({ length: WORKERS }, async (_, w) => {
    for (let i = 0; i < 15; i++) await client.upsertEntity({ partitionKey: "warm", rowKey: `w${w}-${i}` });
  }));
  return { client, table };
}

/** WORKERS closed-loop workers on `client` from `t0` until the end of the run. */
async function drive(client: ReturnType<typeof env.tableClient>, t0: number): Promise<Done[]> {
  const done: Done[] = [];
  const until = t0 + BEFORE_IN_MS + OUTAGE_IN_MS + AFTER_IN_MS;
  let n = 0;
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (Date.now() < until) {
        const i = n++;
        const partition = PARTITIONS[(i * 7) % PARTITIONS.length] as string;
        const startedAt = Date.now() - t0;
        const outcome = await client.upsertEntity({ partitionKey: partition, rowKey: `r${i}`, i }).then(
          () => ({ ok: true, possiblyApplied: false }),
          (error: unknown) => ({ ok: false, possiblyApplied: isPossiblyApplied(error) }),
        );
        done.push({ partition, rowKey: `r${i}`, ...outcome, startedAt, doneAt: Date.now() - t0 });
      }
    }),
  );
  return done;
}

/**
 * The two pools, declared and failFast, side by side through the same faults at the same
 * moments (the faults match the partition in every table), so the machine's load meets both.
 */
async function runSideBySide(): Promise<{ declared: { done: Done[]; table: string }; failFast: { done: Done[]; table: string } }> {
  const declared = await preparePool({ concurrency: WORKERS });
  const failFast = await preparePool({ failFast: true });
  const t0 = Date.now();
  env.simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: OFFLINE }, startInMs: BEFORE_IN_MS, durationInMs: OUTAGE_IN_MS });
  env.simulator.addFault({
    name: "timeouts",
    kind: "operationTimedOut",
    // Short: a long server-side timeout holds a worker whatever the client does (bench/closedLoop.ts says why).
    delayInMs: 100,
    match: { partition: TIMING_OUT },
    startInMs: BEFORE_IN_MS,
    durationInMs: OUTAGE_IN_MS * 0.6,
  });
  const [declaredDone, failFastDone] = await Promise.all([drive(declared.client, t0), drive(failFast.client, t0)]);
  return { declared: { done: declaredDone, table: declared.table }, failFast: { done: failFastDone, table: failFast.table } };
}

/**
 * Healthy operations that succeeded, per second, in [from, to). Successes, not completions: an
 * operation failed at once is no work done, and on a starved machine (load 10 and more) a pool whose
 * circuits opened counted thousands of such failures as healthy throughput (issue 37: failFast's
 * "during" 1,006/s against its 129/s before, 310 of 6,672 operations succeeded).
 */
function healthyRate(done: Done[], from: number, to: number): number {
  const finished = done.filter((d) => d.ok && d.partition !== OFFLINE && d.partition !== TIMING_OUT && d.doneAt >= from && d.doneAt < to);
  return (finished.length * 1000) / (to - from);
}

/** Operations reported failed, and not marked possibly applied, whose entity is in the store all the same. */
async function failedButStored(done: Done[], table: string): Promise<number> {
  const stored = new Set<string>();
  for await (const entity of env.directTableClient(table).listEntities()) stored.add(`${entity.partitionKey}|${entity.rowKey}`);
  return done.filter((d) => !d.ok && !d.possiblyApplied && stored.has(`${d.partition}|${d.rowKey}`)).length;
}

describe("bounded-concurrency callers", () => {
  it("declared with caller: { concurrency }, keep the healthy partitions' work going through an outage and lose no operation that failFast would save", async () => {
    const { declared: auto, failFast: fail } = await runSideBySide();
    const outageFrom = BEFORE_IN_MS;
    const outageTo = BEFORE_IN_MS + OUTAGE_IN_MS;
    const figures = (r: { done: Done[] }) => ({
      before: healthyRate(r.done, 0, outageFrom),
      during: healthyRate(r.done, outageFrom, outageTo),
      succeeded: r.done.filter((d) => d.ok).length,
      operations: r.done.length,
      troubledSucceeded: r.done.filter((d) => (d.partition === OFFLINE || d.partition === TIMING_OUT) && d.ok).length,
    });
    const a = figures(auto);
    const f = figures(fail);
    console.log("bounded callers:", JSON.stringify({ auto: a, fail: f }));
    // The declared pool is not starved: through the outage its healthy partitions keep at least half
    // the rate of failFast's, measured in the same window, so that the machine's load meets both
    // (an open loop's waiting would keep about 1 %: docs/benchmarks.md). Not its rate before the
    // outage: a ratio across two windows moves with whatever else the machine does in between. The
    // issue's 80 % of the rate before is a timing figure, measured by `npm run bench` on a quiet
    // machine (closed loop: 85 %), and printed above.
    expect(a.during).toBeGreaterThanOrEqual(0.5 * f.during);
    // At least as many operations succeed as with failFast in the same wall time (issue 23's figure),
    // the two pools side by side. Not the share of operations: a declared pool without a spare slot
    // fails a troubled partition's retry at once (caller-busy) where failFast sleeps its backoff,
    // so its workers run more operations, more of them failing fast on the dead partition. Five per
    // cent of slack: the two pools share two cores with the rest of the suite.
    expect(a.succeeded).toBeGreaterThanOrEqual(f.succeeded * 0.95);
    expect(await failedButStored(auto.done, auto.table)).toBe(0);
  });
});
