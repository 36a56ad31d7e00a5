import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { odata, type TableClient, type TransactionAction } from "@azure/data-tables";
import { installResilience, type ResilienceHandle } from "azure-storage-resilience";
import { runOpenLoop } from "../load/openLoop.js";
import { renderStressReport } from "./stressReport.js";
import { MAX_IN_FLIGHT } from "./skippedOperations.js";
import { describeAccountError } from "./describeAccountError.js";
import { LOAD_BATCH_SIZE, planRamp, stressRowKey, STRESS_QUERY_PAGE, type StressOperation } from "./rampPlan.js";
import { accountFromConnectionString, embeddedAccount, type StressAccount } from "./stressAccount.js";
import { PARTITION_TARGET_PER_SECOND, type StressOptions } from "./stressOptions.js";
import type { StressResult } from "./stressResult.js";
import { stepStats, throttlingStart, timeline, verdict, type StressEvent, type StressOperationResult } from "./stressStats.js";

/** Where the stress test writes while it runs. */
export interface StressIo {
  log: (line: string) => void;
  /** Aborted by Ctrl-C: stop the ramp, cut in-flight operations, still report. */
  signal: AbortSignal;
}

/** An error the CLI prints as it is: its message is meant for the user and holds no secret. */
export class StressSetupError extends Error {
  override readonly name = "StressSetupError";
}

/** How long in-flight operations may take after the last step. */
const DRAIN_TIMEOUT_IN_MS = 30_000;
/** About 1 KiB per entity, as the scalability targets assume. */
const PAYLOAD = "x".repeat(900);

/**
 * The guide's partition stress test: create a test table, load entities under one
 * PartitionKey, ramp the request rate on it in steps through the package's retry policy,
 * and measure each step against the per-partition target. Writes the HTML report.
 */
export async function runStress(options: StressOptions, io: StressIo): Promise<StressResult> {
  const startedAt = new Date();
  const table = options.table ?? `stress${startedAt.getTime().toString(36)}`;
  const account = options.connectionString === undefined ? await startEmbedded(options, io) : accountFromConnectionString(options.connectionString);
  const handles: ResilienceHandle[] = [];
  try {
    io.log(`Target: ${describeTarget(account)}; table ${table}, PartitionKey "${options.partitionKey}".`);
    const setup = account.setupClient(table);
    handles.push(installResilience(setup, { maxElapsedInMs: 15_000, tryTimeoutInMs: 5_000, retry: { strategy: "exponential", maxRetries: 2, baseDelayInMs: 500 }, circuitBreaker: false }));
    await preflight(setup, account);
    io.log(`Loading ${options.entities} entities under "${options.partitionKey}"...`);
    await load(setup, options.partitionKey, options.entities);

    const events: StressEvent[] = [];
    let rampStartedAt = performance.now();
    const client = account.client(table);
    const at = () => performance.now() - rampStartedAt;
    const handle = installResilience(client, {
      observers: [
        {
          onAttempt: (event) => {
            if (event.attemptClass === "throttled") events.push({ atInMs: at(), type: "throttle" });
            if (event.attemptClass === "timeout") events.push({ atInMs: at(), type: "timeout" });
          },
          onRetry: () => events.push({ atInMs: at(), type: "retry" }),
        },
      ],
    });
    handles.push(handle);
    handle.circuitBreaker?.onTransition((t) => {
      if (t.to === "open") events.push({ atInMs: at(), type: "breakerOpen" });
    });

    const plan = planRamp({ ...options, entities: options.entities });
    io.log(`Ramping ${plan.steps.map((s) => s.entitiesPerSecond).join(" -> ")} entities/s, ${options.stepDurationInSeconds} s per step; Ctrl-C stops early.`);
    rampStartedAt = performance.now();
    const results = await ramp(client, options.partitionKey, plan.operations, io, options.stepDurationInSeconds * 1000);
    const tableDeleted = options.cleanup ? await deleteTable(setup, io) : false;
    const steps = stepStats(plan.steps, results, events, PARTITION_TARGET_PER_SECOND);
    const started = throttlingStart(plan.steps, events);
    const result: StressResult = {
      command: "stress",
      target: account.target,
      table,
      partitionKey: options.partitionKey,
      loadedEntities: options.entities,
      targetPerSecond: PARTITION_TARGET_PER_SECOND,
      stepDurationInSeconds: options.stepDurationInSeconds,
      steps,
      timeline: timeline(plan.steps, results, events),
      throttlingStarted: started,
      verdict: verdict(steps, started, PARTITION_TARGET_PER_SECOND, account.target.simulatedThrottleAt),
      interrupted: io.signal.aborted,
      tableDeleted,
      reportPath: resolve(options.reportPath ?? `stress-report-${stamp(startedAt)}.html`),
      startedAt: startedAt.toISOString(),
    };
    await mkdir(dirname(result.reportPath), { recursive: true });
    await writeFile(result.reportPath, renderStressReport(result), "utf8");
    return result;
  } finally {
    for (const handle of handles) handle.dispose();
    await account.stop();
  }
}

async function startEmbedded(options: StressOptions, io: StressIo): Promise<StressAccount> {
  io.log("Starting Azurite (Tables, in memory, loopback)...");
  return embeddedAccount(options.throttleAt);
}

function describeTarget(account: StressAccount): string {
  const t = account.target;
  if (t.kind === "account") return `account ${t.account} at ${t.endpointHost}`;
  return `embedded Azurite at ${t.endpointHost}${t.simulatedThrottleAt === null ? "" : `, simulator throttling above ${t.simulatedThrottleAt} entities/s per partition`}`;
}

/** Creates the table (an existing one is fine), turning any failure into one clear line. */
async function preflight(client: TableClient, account: StressAccount): Promise<void> {
  try {
    await client.createTable();
  } catch (error) {
    throw new StressSetupError(describeAccountError(error, account.target.endpointHost));
  }
}

async function load(client: TableClient, partitionKey: string, entities: number): Promise<void> {
  for (let from = 0; from < entities; from += LOAD_BATCH_SIZE) {
    const actions: TransactionAction[] = [];
    for (let i = from; i < Math.min(entities, from + LOAD_BATCH_SIZE); i++) actions.push(["upsert", entity(partitionKey, i), "Replace"]);
    await client.submitTransaction(actions);
  }
}

function entity(partitionKey: string, index: number) {
  return { partitionKey, rowKey: stressRowKey(index), payload: PAYLOAD, touchedAt: Date.now() };
}

async function ramp(client: TableClient, partitionKey: string, operations: readonly StressOperation[], io: StressIo, stepInMs: number): Promise<StressOperationResult[]> {
  const results: StressOperationResult[] = [];
  const cutOff = new AbortController();
  const onInterrupt = () => cutOff.abort();
  io.signal.addEventListener("abort", onInterrupt, { once: true });
  const started = performance.now();
  let inFlight = 0;
  let lastStepLogged = -1;
  try {
    const fired = await runOpenLoop(
      operations,
      async (op) => {
        const startedAtInMs = performance.now() - started;
        if (op.step !== lastStepLogged) {
          lastStepLogged = op.step;
          if (op.step > 0) io.log(progressLine(results, op.step - 1, stepInMs));
        }
        if (inFlight >= MAX_IN_FLIGHT) {
          results.push({ step: op.step, startedAtInMs, endedAtInMs: startedAtInMs, latencyInMs: 0, outcome: "skipped", entities: 0 });
          return;
        }
        inFlight++;
        try {
          results.push(await perform(client, partitionKey, op, started, cutOff.signal));
        } finally {
          inFlight--;
        }
      },
      { signal: io.signal },
    );
    const drained = Promise.allSettled(fired);
    await Promise.race([drained, sleep(DRAIN_TIMEOUT_IN_MS, undefined, { signal: cutOff.signal }).catch(() => undefined)]);
    cutOff.abort();
    await drained;
    if (lastStepLogged >= 0) io.log(progressLine(results, lastStepLogged, stepInMs));
    return results;
  } finally {
    io.signal.removeEventListener("abort", onInterrupt);
  }
}

function progressLine(results: readonly StressOperationResult[], step: number, stepInMs: number): string {
  const from = step * stepInMs;
  const done = results.filter((r) => r.outcome === "success" && r.endedAtInMs >= from && r.endedAtInMs < from + stepInMs);
  const entities = done.reduce((sum, r) => sum + r.entities, 0);
  const failed = results.filter((r) => r.step === step && r.outcome === "failed").length;
  const skipped = results.filter((r) => r.step === step && r.outcome === "skipped").length;
  const notSent = skipped === 0 ? "" : `, ${skipped} skipped (not sent: ${MAX_IN_FLIGHT} already in flight)`;
  return `  step ${step + 1}: ${Math.round(entities / (stepInMs / 1000))} entities/s achieved, ${failed} failed${notSent}`;
}

async function perform(client: TableClient, partitionKey: string, op: StressOperation, started: number, abortSignal: AbortSignal): Promise<StressOperationResult> {
  const t0 = performance.now();
  const base = { step: op.step, startedAtInMs: t0 - started };
  const done = (outcome: StressOperationResult["outcome"], entities: number): StressOperationResult => {
    const now = performance.now();
    return { ...base, endedAtInMs: now - started, latencyInMs: now - t0, outcome, entities };
  };
  try {
    switch (op.kind) {
      case "upsert":
        await client.upsertEntity(entity(partitionKey, op.rows[0] ?? 0), "Merge", { abortSignal });
        return done("success", 1);
      case "read":
        await client.getEntity(partitionKey, stressRowKey(op.rows[0] ?? 0), { abortSignal });
        return done("success", 1);
      case "query": {
        await client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${partitionKey}` }, abortSignal }).byPage({ maxPageSize: STRESS_QUERY_PAGE }).next();
        return done("success", 1);
      }
      case "batch":
        await client.submitTransaction(op.rows.map((row): TransactionAction => ["upsert", entity(partitionKey, row), "Merge"]), { abortSignal });
        return done("success", op.rows.length);
    }
  } catch {
    return done(abortSignal.aborted ? "aborted" : "failed", 0);
  }
}

async function deleteTable(client: TableClient, io: StressIo): Promise<boolean> {
  try {
    await client.deleteTable();
    return true;
  } catch (error) {
    io.log(`Could not delete the test table: ${(error as { statusCode?: number })?.statusCode ?? "network error"}.`);
    return false;
  }
}

function stamp(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}
