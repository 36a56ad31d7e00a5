import { Registry } from "prom-client";
import { beforeEach, describe, expect, it } from "vitest";
import { getRetryInfo, installResilience, type InstallResilienceOptions } from "../../src/index.js";
import { DEFAULT_RETRY_BUDGET_OPTIONS } from "../../src/flow/retryBudget.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// A whole account throttled (every request 503 ServerBusy for 4 s): with the default retry
// budget, the attempts answered with the throttle stay within requests + reserve + retryRatio x
// requests; without it, every operation retries on its own and the load multiplies. The bound is
// on attempts into the throttle, not on all attempts: a retry that succeeds (one landing after the
// throttle's end) gives its retry back (`refund`), so the budget binds while retries keep failing;
// on a loaded machine more retries land after the end, and the total passed the bound (454 for 400).

const env = withTableSimulator({ seed: 5 });
const OPERATIONS = 200;
const OUTAGE_IN_MS = 4000;

let table: string;

beforeEach(async () => {
  env.simulator.clearFaults();
  table = uniqueTableName("budget");
  await env.directTableClient(table).createTable();
  env.simulator.resetRecords();
});

interface Run {
  attempts: number;
  /** Attempts answered with the throttle. */
  intoFault: number;
  succeeded: number;
  budgetExhausted: number;
  elapsedInMs: number;
  metricText: string;
}

/** OPERATIONS inserts, one every 10 ms, each to its own partition, while every request is refused for OUTAGE_IN_MS. */
async function throttledRun(options: InstallResilienceOptions): Promise<Run> {
  const registry = new Registry();
  const client = env.tableClient(table);
  const handle = installResilience(client, { circuitBreaker: false, metrics: { registry }, ...options });
  env.simulator.addFault({ name: "account-throttled", kind: "serverBusy", durationInMs: OUTAGE_IN_MS });
  const started = performance.now();
  const operations: Array<Promise<PromiseSettledResult<unknown>>> = [];
  for (let i = 0; i < OPERATIONS; i++) {
    const write = client.createEntity({ partitionKey: `p${i}`, rowKey: `${options.retryBudget === false ? "free" : "budget"}${i}` });
    // Settled at once: a rejection before the loop ends must not count as unhandled.
    operations.push(
      write.then(
        (value): PromiseFulfilledResult<unknown> => ({ status: "fulfilled", value }),
        (reason: unknown): PromiseRejectedResult => ({ status: "rejected", reason }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const results = await Promise.all(operations);
  const elapsedInMs = performance.now() - started;
  handle.dispose();
  const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  return {
    attempts: env.simulator.count({ method: "POST" }),
    intoFault: env.simulator.count({ method: "POST", fault: "serverBusy" }),
    succeeded: results.length - rejected.length,
    budgetExhausted: rejected.filter((r) => getRetryInfo(r.reason)?.stopReason === "budget-exhausted").length,
    elapsedInMs,
    metricText: await registry.metrics(),
  };
}

/** requests + reserve + retryRatio x requests, per window the run spans. */
function boundOf(run: Run): number {
  const { retryRatio, minRetriesPerSecond, windowInMs } = DEFAULT_RETRY_BUDGET_OPTIONS;
  const reserve = (minRetriesPerSecond * windowInMs) / 1000;
  // Nothing leaves the window within 9 s (ten 1 s buckets); a longer run gets one more window's worth per 9 s.
  const windows = Math.ceil((run.elapsedInMs + 1000) / (windowInMs * 0.9));
  return OPERATIONS + windows * Math.floor(reserve + retryRatio * OPERATIONS);
}

describe("account-wide throttling and the retry budget", () => {
  it("with the defaults (an open-loop caller), the budget defers retries: attempts into the throttle stay within the bound and every operation succeeds", async () => {
    const run = await throttledRun({});
    const bound = boundOf(run);
    console.info(
      `retry budget (open loop), account throttled ${OUTAGE_IN_MS} ms: ${run.attempts} attempts (${run.intoFault} into the throttle) for ${OPERATIONS} operations ` +
        `(bound ${bound}; ${run.succeeded} succeeded, ${run.budgetExhausted} surfaced with budget-exhausted) in ${Math.round(run.elapsedInMs)} ms`,
    );
    expect(run.intoFault).toBeLessThanOrEqual(bound);
    expect(run.budgetExhausted).toBe(0);
    expect(run.succeeded).toBe(OPERATIONS);
    expect(run.metricText).not.toContain('azure_storage_local_refusals_total{service="table",reason="budget"}');
  }, 90_000);

  it("a failFast caller: attempts into the throttle stay within requests + reserve + retryRatio x requests, the excess fails at once", async () => {
    const run = await throttledRun({ caller: { failFast: true } });
    const bound = boundOf(run);
    console.info(
      `retry budget (failFast), account throttled ${OUTAGE_IN_MS} ms: ${run.attempts} attempts (${run.intoFault} into the throttle) for ${OPERATIONS} operations ` +
        `(bound ${bound}; ${run.succeeded} succeeded, ${run.budgetExhausted} surfaced with budget-exhausted) in ${Math.round(run.elapsedInMs)} ms`,
    );
    expect(run.intoFault).toBeLessThanOrEqual(bound);
    expect(run.budgetExhausted).toBeGreaterThan(0);
    expect(run.metricText).toContain(`azure_storage_local_refusals_total{service="table",reason="budget"} ${run.budgetExhausted}`);
    expect(run.metricText).toContain(`azure_storage_retry_budget_exhausted_total{service="table"} ${run.budgetExhausted}`);
    expect(run.metricText).toMatch(/azure_storage_operations_total\{service="table",operation="insert_entity",outcome="failure"\} \d+/);
  }, 90_000);

  it("(control) without a budget the same outage costs several attempts per operation", async () => {
    const run = await throttledRun({ retryBudget: false });
    console.info(
      `no retry budget, account throttled ${OUTAGE_IN_MS} ms: ${run.attempts} attempts for ${OPERATIONS} operations ` +
        `(${run.succeeded} succeeded) in ${Math.round(run.elapsedInMs)} ms`,
    );
    expect(run.budgetExhausted).toBe(0);
    expect(run.attempts).toBeGreaterThan(OPERATIONS * 2);
  }, 90_000);
});
