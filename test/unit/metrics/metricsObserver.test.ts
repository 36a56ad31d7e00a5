import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Counter, Registry } from "prom-client";
import { CircuitOpenError, createMetricsObserver, PartitionBusyError, fixedBackoff, resilientRetryPolicy, type MetricsObserver } from "../../../src/index.js";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { type AttemptGate } from "../../../src/breaker/attemptGate.js";
import type { CallerOptions } from "../../../src/policies/callerPolicy.js";
import type { CircuitState, CircuitStateSource, CircuitTransition } from "../../../src/breaker/partitionBreakerInterface.js";
import {
  internal,
  notFound,
  ok,
  reply,
  request,
  sampleValue,
  samplesOf,
  scripted,
  serverBusy,
  sumOf,
  timedOut,
  type Step,
} from "./metricsTestKit.js";
import { asGateOption, gateOf, waitOf } from "../../support/scriptedGate.js";

const table = { service: "table", operation: "get_entity" };

let registry: Registry;
beforeEach(() => {
  registry = new Registry();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs one operation through the real policy with a metrics observer and a scripted `next`. */
async function run(observer: MetricsObserver, steps: Step[], options: { maxRetries?: number; gate?: AttemptGate; caller?: CallerOptions; url?: string; method?: "GET" | "PUT" } = {}) {
  const policy = resilientRetryPolicy({
    retry: fixedBackoff({ maxRetries: options.maxRetries ?? 3, delayInMs: 100 }),
    observers: [observer],
    gate: asGateOption(options.gate),
    caller: options.caller,
  });
  const pending = policy
    .sendRequest(request({ url: options.url, method: options.method }), scripted(...steps))
    .then((response) => response.status)
    .catch((error: unknown) => error);
  await vi.runAllTimersAsync();
  return pending;
}

describe("createMetricsObserver: counters for scripted outcomes", () => {
  it("503 ServerBusy twice then 200: 3 attempts, 2 retries, 2 throttles, 1 success", async () => {
    const observer = createMetricsObserver("table", { registry });
    expect(await run(observer, [serverBusy, serverBusy, ok])).toBe(200);

    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "throttled" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "success" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(3);
    expect(await sampleValue(registry, "azure_storage_retries_total", { ...table, reason: "throttled" })).toBe(2);
    expect(await sumOf(registry, "azure_storage_retries_total")).toBe(2);
    expect(await sampleValue(registry, "azure_storage_throttles_total", { ...table, status: "503", error_code: "ServerBusy" })).toBe(2);
    expect(await sumOf(registry, "azure_storage_throttles_total")).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(1);
    for (const outcome of ["failure", "circuit_open", "partition_busy", "aborted"]) {
      expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome })).toBe(0);
    }
    expect(await sumOf(registry, "azure_storage_retries_exhausted_total")).toBe(0);
    expect(await sampleValue(registry, "azure_storage_retry_delay_seconds_count", { service: "table", reason: "throttled" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_retry_delay_seconds_sum", { service: "table", reason: "throttled" })).toBeCloseTo(0.2);
    expect(await sampleValue(registry, "azure_storage_retry_delay_seconds_bucket", { service: "table", reason: "throttled", le: "0.05" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_retry_delay_seconds_bucket", { service: "table", reason: "throttled", le: "0.1" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operation_duration_seconds_count", { ...table, outcome: "success" })).toBe(1);
    // Two 100 ms waits on fake timers: the whole operation, waits included.
    expect(await sampleValue(registry, "azure_storage_operation_duration_seconds_sum", { ...table, outcome: "success" })).toBeCloseTo(0.2, 2);
  });

  it("retries exhausted on 500s: failure, exhausted{class=transient}, no throttles", async () => {
    const observer = createMetricsObserver("table", { registry });
    expect(await run(observer, [internal, internal, internal], { maxRetries: 2 })).toBe(500);

    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "transient" })).toBe(3);
    expect(await sampleValue(registry, "azure_storage_retries_total", { ...table, reason: "transient" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "failure" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_retries_exhausted_total", { ...table, class: "transient" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_retries_exhausted_total", { ...table, class: "throttled" })).toBe(0);
    expect(await samplesOf(registry, "azure_storage_throttles_total")).toEqual([]);
  });

  it("a timeout then a point read's 404: classes timeout + permanent, the operation not_found (not a failure), nothing exhausted", async () => {
    const observer = createMetricsObserver("table", { registry });
    expect(await run(observer, [timedOut, notFound])).toBe(404);

    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "timeout" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "permanent" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_retries_total", { ...table, reason: "timeout" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "not_found" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "failure" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_operation_duration_seconds_count", { ...table, outcome: "not_found" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_retries_exhausted_total")).toBe(0);
  });

  it("a 404 on a query stays a failure; the answer outcomes get no series until they happen", async () => {
    const observer = createMetricsObserver("table", { registry });
    const query = { service: "table", operation: "query_entities" };
    expect(await run(observer, [notFound], { url: "https://acct.table.core.windows.net/orders()?$filter=RowKey%20eq%20'r1'" })).toBe(404);

    expect(await sampleValue(registry, "azure_storage_operations_total", { ...query, outcome: "failure" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...query, outcome: "not_found" })).toBeUndefined();
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...query, outcome: "success" })).toBe(0);
  });

  it("429 with an unknown code and 503 without one: status kept, error_code other / none", async () => {
    const observer = createMetricsObserver("table", { registry });
    const weird: Step = (req) => reply(req, 429, { "x-ms-error-code": "SomethingNew-abc123" });
    const bare: Step = (req) => reply(req, 503);
    expect(await run(observer, [weird, bare, ok])).toBe(200);

    expect(await sampleValue(registry, "azure_storage_throttles_total", { ...table, status: "429", error_code: "other" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_throttles_total", { ...table, status: "503", error_code: "none" })).toBe(1);
    const text = await registry.metrics();
    expect(text).not.toContain("SomethingNew");
  });

  it("an aborted operation counts as aborted", async () => {
    const observer = createMetricsObserver("table", { registry });
    const controller = new AbortController();
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 1000 }), observers: [observer] });
    const pending = policy.sendRequest(request({ abortSignal: controller.signal }), scripted(serverBusy, ok)).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    await vi.runAllTimersAsync();
    expect(await pending).toMatchObject({ name: "AbortError" });
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "aborted" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "throttled" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_retries_total", { ...table, reason: "throttled" })).toBe(1);
  });

  it("a circuit rejection: attempts{circuit_open}, circuit_rejections_total, operations{circuit_open}", async () => {
    const observer = createMetricsObserver("table", { registry });
    const gate: AttemptGate = {
      admit: () => ({ decision: "refuse", reason: "circuit-open", scope: "table|acct|orders|p1", retryAfterInMs: 1000 }),
      record: () => undefined,
    };
    const error = await run(observer, [], { gate, caller: { failFast: true } });
    expect(error).toBeInstanceOf(CircuitOpenError);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "circuit_open" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_circuit_rejections_total", table)).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "circuit_open" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_retries_total")).toBe(0);
    expect(await sampleValue(registry, "azure_storage_local_refusals_total", { service: "table", reason: "circuit" })).toBe(1);
  });

  it("a local wait: local_waits{reason} counts the operation while it waits for the circuit's probe, 0 once it has gone", async () => {
    const observer = createMetricsObserver("table", { registry });
    const gate = gateOf(waitOf("circuit", 1000));
    const pending = resilientRetryPolicy({ observers: [observer], gate: asGateOption(gate), random: () => 0 }).sendRequest(request(), scripted(ok));
    await vi.advanceTimersByTimeAsync(500);
    expect(await sampleValue(registry, "azure_storage_local_waits", { service: "table", reason: "circuit" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_local_waits", { service: "table", reason: "budget" })).toBe(0);
    await vi.advanceTimersByTimeAsync(500);
    expect((await pending).status).toBe(200);
    expect(await sampleValue(registry, "azure_storage_local_waits", { service: "table", reason: "circuit" })).toBe(0);
    expect(await sumOf(registry, "azure_storage_local_refusals_total")).toBe(0);
  });

  it("a paced refusal (partition busy): operations{partition_busy}, no attempt, nothing refused by a circuit", async () => {
    const observer = createMetricsObserver("table", { registry });
    const gate: AttemptGate = {
      admit: () => ({ decision: "refuse", reason: "paced", scope: "table|acct|orders|p1", retryAfterInMs: 5000 }),
      record: () => undefined,
    };
    const error = await run(observer, [], { gate });
    expect(error).toBeInstanceOf(PartitionBusyError);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "partition_busy" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "failure" })).toBe(0);
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(0);
    expect(await sumOf(registry, "azure_storage_circuit_rejections_total")).toBe(0);
    expect(await sumOf(registry, "azure_storage_retries_exhausted_total")).toBe(0);
  });

  it("names the operation from method and URL: an upsert is not a get", async () => {
    const observer = createMetricsObserver("table", { registry });
    await run(observer, [ok], { method: "PUT" });
    await run(observer, [ok]);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "table", operation: "upsert_entity", outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(1);
  });

  it("puts no URL, account, table or partition key in any label by default", async () => {
    const observer = createMetricsObserver("table", { registry });
    await run(observer, [serverBusy, ok], { url: "https://secretacct.table.core.windows.net/orders(PartitionKey='customer-42',RowKey='r')?sig=abc" });
    const text = await registry.metrics();
    for (const leak of ["secretacct", "orders", "customer-42", "sig=", "abc", "partition_throttles"]) expect(text).not.toContain(leak);
  });
});

describe("createMetricsObserver: sharing a registry", () => {
  it("two observers on one registry: no error, series told apart by service and operation", async () => {
    const tables = createMetricsObserver("table", { registry });
    const queues = createMetricsObserver("queue", { registry });
    const again = createMetricsObserver("table", { registry });
    await run(tables, [ok]);
    await run(again, [serverBusy, ok]);
    await run(queues, [ok], { url: "https://acct.queue.core.windows.net/jobs/messages?numofmessages=1", method: "GET" });

    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "success" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { service: "queue", operation: "receive_messages", outcome: "success" })).toBe(1);
    // One HELP/TYPE block per family, however many observers.
    const text = await registry.metrics();
    expect(text.match(/# TYPE azure_storage_operations_total counter/g)).toHaveLength(1);
  });

  it("refuses a foreign metric squatting a name, saying what squats it", () => {
    new Counter({ name: "azure_storage_attempts_total", help: "someone else's", labelNames: ["job"], registers: [registry] });
    expect(() => createMetricsObserver("table", { registry })).toThrow(
      /Cannot register metric azure_storage_attempts_total: the registry already holds a counter under that name, not created by azure-storage-resilience; expected a counter with labels \[service, operation, class\]/,
    );
  });

  it("refuses different histogram buckets on the same family", () => {
    createMetricsObserver("table", { registry });
    expect(() => createMetricsObserver("blob", { registry, bucketsInSeconds: [1, 2] })).toThrow(/already registered with buckets/);
  });

  it("a custom prefix gives separate families on the same registry", async () => {
    createMetricsObserver("table", { registry });
    const other = createMetricsObserver("table", { registry, prefix: "app_storage_" });
    await run(other, [ok]);
    expect(await sampleValue(registry, "app_storage_operations_total", { ...table, outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBeUndefined();
  });

  it("registry.resetMetrics() zeroes the series and recording goes on", async () => {
    const observer = createMetricsObserver("table", { registry });
    await run(observer, [ok]);
    registry.resetMetrics();
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(0);
    await run(observer, [ok]);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(1);
  });
});

/** A CircuitStateSource whose counts and transitions the test drives. */
function fakeCircuits() {
  const listeners = new Set<(t: CircuitTransition) => void>();
  const counts: Record<CircuitState, number> = { closed: 0, open: 0, half_open: 0 };
  const source: CircuitStateSource = {
    stateCounts: () => ({ ...counts }),
    onTransition(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const transition = (from: CircuitState, to: CircuitState) => {
    counts[from] -= 1;
    counts[to] += 1;
    for (const listener of listeners) listener({ service: "table", scope: "table|acct|orders|p1", from, to });
  };
  return { source, counts, transition, listeners };
}

describe("createMetricsObserver: circuits", () => {
  it("reads the gauge from stateCounts() at scrape time and counts transitions", async () => {
    const observer = createMetricsObserver("table", { registry });
    const circuits = fakeCircuits();
    circuits.counts.closed = 3;
    observer.observeCircuits(circuits.source);
    circuits.transition("closed", "open");

    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "open" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "closed" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "half_open" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_circuit_transitions_total", { service: "table", to: "open" })).toBe(1);

    circuits.transition("open", "half_open");
    circuits.transition("half_open", "closed");
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "closed" })).toBe(3);
    expect(await sampleValue(registry, "azure_storage_circuit_transitions_total", { service: "table", to: "half_open" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_circuit_transitions_total", { service: "table", to: "closed" })).toBe(1);
  });

  it("sums the gauge over two breakers of one service", async () => {
    const a = fakeCircuits();
    const b = fakeCircuits();
    a.counts.open = 2;
    b.counts.open = 1;
    createMetricsObserver("table", { registry }).observeCircuits(a.source);
    createMetricsObserver("table", { registry }).observeCircuits(b.source);
    expect(await sampleValue(registry, "azure_storage_circuit_breakers", { service: "table", state: "open" })).toBe(3);
  });

  it("dispose() unsubscribes: no gauge series, no further transitions counted", async () => {
    const observer = createMetricsObserver("table", { registry });
    const circuits = fakeCircuits();
    circuits.counts.closed = 1;
    observer.observeCircuits(circuits.source);
    observer.dispose();
    observer.dispose();
    expect(circuits.listeners.size).toBe(0);
    circuits.transition("closed", "open");
    expect(await samplesOf(registry, "azure_storage_circuit_breakers")).toEqual([]);
    expect(await samplesOf(registry, "azure_storage_circuit_transitions_total")).toEqual([]);
  });

  it("a stateCounts() that throws costs its series, not the scrape", async () => {
    const observer = createMetricsObserver("table", { registry });
    observer.observeCircuits({
      stateCounts: () => {
        throw new Error("boom");
      },
      onTransition: () => () => {},
    });
    await expect(registry.metrics()).resolves.toContain("# TYPE azure_storage_circuit_breakers gauge");
  });
});

describe("createMetricsObserver: the opt-in partition label", () => {
  const entity = (pk: string) => `https://acct.table.core.windows.net/orders(PartitionKey='${pk}',RowKey='r')`;

  it("gives the first topN scopes that reach minThrottles their own value, the rest `other`", async () => {
    const observer = createMetricsObserver("table", { registry, partitionLabel: { topN: 2, minThrottles: 2 } });
    await run(observer, [serverBusy, serverBusy, ok], { url: entity("hot-1") }); // 2nd throttle earns a slot
    await run(observer, [serverBusy, ok], { url: entity("cold") }); // 1 throttle: other
    await run(observer, [serverBusy, serverBusy, serverBusy, ok], { url: entity("hot-2") }); // slot on its 2nd
    await run(observer, [serverBusy, serverBusy, ok], { url: entity("late") }); // slots full: other

    const name = "azure_storage_partition_throttles_total";
    expect(await sampleValue(registry, name, { service: "table", partition: "table|acct|orders|hot-1" })).toBe(1);
    expect(await sampleValue(registry, name, { service: "table", partition: "table|acct|orders|hot-2" })).toBe(2);
    expect(await sampleValue(registry, name, { service: "table", partition: "other" })).toBe(1 + 1 + 1 + 2);
    expect(await sumOf(registry, name)).toBe(await sumOf(registry, "azure_storage_throttles_total"));
    expect(await samplesOf(registry, name)).toHaveLength(3);
  });

  it("is absent unless asked for", async () => {
    const observer = createMetricsObserver("table", { registry });
    await run(observer, [serverBusy, ok]);
    expect(await registry.metrics()).not.toContain("partition_throttles_total");
  });
});

describe("createMetricsObserver: options", () => {
  it.each([
    [{ prefix: "bad-prefix" }, /^prefix must match/],
    [{ partitionLabel: { topN: 0 } }, /^partitionLabel.topN must be between 1 and 1000; got 0/],
    [{ partitionLabel: { top: 3 } }, /^partitionLabel.top is not a known option/],
    [{ bucketsInSeconds: [1, 1] }, /^bucketsInSeconds must increase/],
    [{ registry: {} }, /^registry must be a prom-client Registry/],
    [{ collectDefaults: true }, /^collectDefaults is not a known option/],
  ])("rejects %j", (options, message) => {
    expect(() => createMetricsObserver("table", options as never)).toThrow(message);
  });

  it("rejects an unknown service", () => {
    expect(() => createMetricsObserver("files" as never, { registry })).toThrow(/service must be one of/);
  });
});

describe("createMetricsObserver: interleaved operations", () => {
  it("names each request at each hook, whatever ran in between", async () => {
    const observer = createMetricsObserver("table", { registry });
    const get = request();
    const put = request({ method: "PUT" });
    const upsert = { service: "table", operation: "upsert_entity" };
    // The loop reads one address per operation and hands the same one to every hook.
    const getOp = readRequestAddress(get);
    const putOp = readRequestAddress(put);
    observer.onAttempt?.({ request: get, address: getOp, attempt: 1, attemptClass: "throttled", status: 503, errorCode: "ServerBusy", durationInMs: 1, pacedDelayInMs: 0 });
    observer.onAttempt?.({ request: put, address: putOp, attempt: 1, attemptClass: "transient", status: 500, durationInMs: 1, pacedDelayInMs: 0 });
    observer.onRetry?.({ request: get, address: getOp, attempt: 1, reason: "throttled", delayInMs: 100, delaySource: "backoff" });
    observer.onRetry?.({ request: put, address: putOp, attempt: 1, reason: "transient", delayInMs: 100, delaySource: "backoff" });
    observer.onAttempt?.({ request: put, address: putOp, attempt: 2, attemptClass: "success", status: 200, durationInMs: 1, pacedDelayInMs: 0 });
    observer.onAttempt?.({ request: get, address: getOp, attempt: 2, attemptClass: "success", status: 200, durationInMs: 1, pacedDelayInMs: 0 });
    observer.onOperationEnd?.({ request: put, address: putOp, attempts: 2, finalClass: "success", stopReason: "success", elapsedInMs: 200 });
    observer.onOperationEnd?.({ request: get, address: getOp, attempts: 2, finalClass: "success", stopReason: "success", elapsedInMs: 300 });
    // The same request object again, after its end: named afresh, still the same operation.
    const getAgain = readRequestAddress(get);
    observer.onAttempt?.({ request: get, address: getAgain, attempt: 1, attemptClass: "success", status: 200, durationInMs: 1, pacedDelayInMs: 0 });
    observer.onOperationEnd?.({ request: get, address: getAgain, attempts: 1, finalClass: "success", stopReason: "success", elapsedInMs: 1 });

    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "throttled" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...table, class: "success" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...upsert, class: "transient" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_attempts_total", { ...upsert, class: "success" })).toBe(1);
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(5);
    expect(await sampleValue(registry, "azure_storage_retries_total", { ...table, reason: "throttled" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_retries_total", { ...upsert, reason: "transient" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_throttles_total", { ...table, status: "503", error_code: "ServerBusy" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome: "success" })).toBe(2);
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...upsert, outcome: "success" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_operation_duration_seconds_sum", { ...table, outcome: "success" })).toBeCloseTo(0.301);
    expect(await sampleValue(registry, "azure_storage_operation_duration_seconds_sum", { ...upsert, outcome: "success" })).toBeCloseTo(0.2);
  });
});

describe("createMetricsObserver: stop reasons", () => {
  it.each([
    ["retries-exhausted", "failure", 1],
    ["deadline", "failure", 1],
    ["budget-exhausted", "failure", 1],
    ["body-not-replayable", "failure", 0],
    ["permanent", "failure", 0],
    ["partition-busy", "partition_busy", 0],
  ] as const)("%s -> outcome %s, exhausted %i", async (stopReason, outcome, exhausted) => {
    const observer = createMetricsObserver("table", { registry });
    const req = request();
    const address = readRequestAddress(req);
    observer.onAttempt?.({ request: req, address, attempt: 1, attemptClass: "throttled", status: 503, durationInMs: 1, pacedDelayInMs: 0 });
    observer.onOperationEnd?.({ request: req, address, attempts: 1, finalClass: "throttled", stopReason, elapsedInMs: 5 });
    expect(await sampleValue(registry, "azure_storage_operations_total", { ...table, outcome })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_retries_exhausted_total", { ...table, class: "throttled" })).toBe(exhausted);
  });
});
