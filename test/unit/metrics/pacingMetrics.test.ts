import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Registry } from "prom-client";
import { createMetricsObserver, fixedBackoff, resilientRetryPolicy, type MetricsObserver } from "../../../src/index.js";
import { SEND_NOW, type AttemptGate } from "../../../src/breaker/attemptGate.js";
import { type PacedScope } from "../../../src/metrics/pacingMetrics.js";
import type { CircuitStateSource } from "../../../src/breaker/partitionBreakerInterface.js";
import { ok, request, sampleValue, samplesOf, scripted, serverBusy, sumOf, type Step } from "./metricsTestKit.js";
import { asGateOption, gateOf, waitOf } from "../../support/scriptedGate.js";

let registry: Registry;
beforeEach(() => {
  registry = new Registry();
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const entity = (pk: string) => `https://acct.table.core.windows.net/orders(PartitionKey='${pk}',RowKey='r')`;
const scopeOf = (pk: string) => `table|acct|orders|${pk}`;

/** A gate that hands out the given paced waits (0: none), one per attempt, then sends at once. */
function pacingGate(...delaysInMs: number[]): AttemptGate {
  return gateOf(...delaysInMs.map((delayInMs) => (delayInMs > 0 ? waitOf("pacing", delayInMs) : SEND_NOW)));
}

async function run(observer: MetricsObserver, steps: Step[], options: { gate?: AttemptGate; url?: string } = {}) {
  const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 100 }), observers: [observer], gate: asGateOption(options.gate) });
  const pending = policy.sendRequest(request({ url: options.url }), scripted(...steps)).then(
    (response) => response.status,
    (error: unknown) => error,
  );
  await vi.runAllTimersAsync();
  return pending;
}

/** A breaker stand-in: no circuits, and the paced scopes the test sets. */
function fakeBreaker(paced: PacedScope[] = []) {
  const source: CircuitStateSource & { pacedScopes(): PacedScope[] } = {
    stateCounts: () => ({ closed: 0, open: 0, half_open: 0 }),
    onTransition: () => () => undefined,
    pacedScopes: () => paced.map((p) => ({ ...p })),
  };
  return { source, paced };
}

describe("pacing_delay_seconds", () => {
  it("observes each attempt that waited for its paced slot, by operation, and nothing for attempts that did not wait", async () => {
    const observer = createMetricsObserver("table", { registry });
    // Attempt 1 waits 250 ms (throttled), attempt 2 waits 40 ms (succeeds); then an operation that never waits.
    expect(await run(observer, [serverBusy, ok], { gate: pacingGate(250, 40) })).toBe(200);
    expect(await run(observer, [ok], { gate: pacingGate(0) })).toBe(200);

    const labels = { service: "table", operation: "get_entity" };
    expect(await sampleValue(registry, "azure_storage_pacing_delay_seconds_count", labels)).toBe(2);
    expect(await sampleValue(registry, "azure_storage_pacing_delay_seconds_sum", labels)).toBeCloseTo(0.29);
    expect(await sampleValue(registry, "azure_storage_pacing_delay_seconds_bucket", { ...labels, le: "0.025" })).toBe(0);
    expect(await sampleValue(registry, "azure_storage_pacing_delay_seconds_bucket", { ...labels, le: "0.05" })).toBe(1);
    expect(await sampleValue(registry, "azure_storage_pacing_delay_seconds_bucket", { ...labels, le: "0.25" })).toBe(2);
    // Every attempt still counts once in attempts_total, waited or not.
    expect(await sumOf(registry, "azure_storage_attempts_total")).toBe(3);
  });

  it("has no series while nothing is paced", async () => {
    const observer = createMetricsObserver("table", { registry });
    await run(observer, [serverBusy, ok], { gate: { admit: () => SEND_NOW, record: () => undefined } });
    await run(observer, [ok]);
    expect(await samplesOf(registry, "azure_storage_pacing_delay_seconds_count")).toEqual([]);
  });
});

describe("paced_partitions", () => {
  it("reads pacedScopes() at every scrape: 0 while none is paced, then their number", async () => {
    const observer = createMetricsObserver("table", { registry });
    const breaker = fakeBreaker();
    observer.observeCircuits(breaker.source);
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" })).toBe(0);
    breaker.paced.push({ scope: scopeOf("hot"), ratePerSecond: 40 }, { scope: scopeOf("warm"), ratePerSecond: 120 });
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" })).toBe(2);
    breaker.paced.splice(0, 1);
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" })).toBe(1);
  });

  it("sums two breakers of one service and keeps services apart", async () => {
    const a = fakeBreaker([{ scope: scopeOf("a"), ratePerSecond: 10 }]);
    const b = fakeBreaker([{ scope: scopeOf("b"), ratePerSecond: 10 }, { scope: scopeOf("c"), ratePerSecond: 10 }]);
    const blob = fakeBreaker([{ scope: "blob|acct|photos|cat.jpg", ratePerSecond: 5 }]);
    createMetricsObserver("table", { registry }).observeCircuits(a.source);
    createMetricsObserver("table", { registry }).observeCircuits(b.source);
    createMetricsObserver("blob", { registry }).observeCircuits(blob.source);
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" })).toBe(3);
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "blob" })).toBe(1);
  });

  it("a circuit source without pacedScopes() reports circuits only", async () => {
    const observer = createMetricsObserver("table", { registry, partitionLabel: true });
    const { pacedScopes: _unused, ...circuitsOnly } = fakeBreaker([{ scope: scopeOf("hot"), ratePerSecond: 1 }]).source;
    observer.observeCircuits(circuitsOnly);
    expect(await samplesOf(registry, "azure_storage_circuit_breakers")).toHaveLength(3);
    expect(await samplesOf(registry, "azure_storage_paced_partitions")).toEqual([]);
    expect(await samplesOf(registry, "azure_storage_partition_send_rate")).toEqual([]);
  });

  it("the unsubscribe function and dispose() stop the pacing gauges with the circuit gauge", async () => {
    const first = createMetricsObserver("table", { registry, partitionLabel: true });
    const stop = first.observeCircuits(fakeBreaker([{ scope: scopeOf("hot"), ratePerSecond: 7 }]).source);
    stop();
    stop();
    expect(await samplesOf(registry, "azure_storage_paced_partitions")).toEqual([]);
    expect(await samplesOf(registry, "azure_storage_partition_send_rate")).toEqual([]);

    const second = createMetricsObserver("table", { registry, partitionLabel: true });
    second.observeCircuits(fakeBreaker([{ scope: scopeOf("hot"), ratePerSecond: 7 }]).source);
    expect(await sampleValue(registry, "azure_storage_paced_partitions", { service: "table" })).toBe(1);
    second.dispose();
    expect(await samplesOf(registry, "azure_storage_paced_partitions")).toEqual([]);
    expect(await samplesOf(registry, "azure_storage_circuit_breakers")).toEqual([]);
  });

  it("a pacedScopes() that throws costs its series, not the scrape", async () => {
    const observer = createMetricsObserver("table", { registry, partitionLabel: true });
    const source = fakeBreaker().source;
    source.pacedScopes = () => {
      throw new Error("boom");
    };
    observer.observeCircuits(source);
    const text = await registry.metrics();
    expect(text).toContain("# TYPE azure_storage_paced_partitions gauge");
    expect(text).toContain('azure_storage_circuit_breakers{service="table",state="open"} 0');
    expect(await samplesOf(registry, "azure_storage_paced_partitions")).toEqual([]);
  });
});

describe("partition_send_rate (opt-in partition label)", () => {
  it("gives scopes that earned a partition label their own rate, sums the rest under `other`", async () => {
    const observer = createMetricsObserver("table", { registry, partitionLabel: { topN: 1, minThrottles: 2 } });
    await run(observer, [serverBusy, serverBusy, ok], { url: entity("hot") }); // 2 throttles: earns the one slot
    await run(observer, [serverBusy, serverBusy, ok], { url: entity("warm") }); // slot taken: other
    const breaker = fakeBreaker([
      { scope: scopeOf("hot"), ratePerSecond: 42.5 },
      { scope: scopeOf("warm"), ratePerSecond: 10 },
      { scope: scopeOf("never-throttled-here"), ratePerSecond: 3 },
    ]);
    observer.observeCircuits(breaker.source);

    const name = "azure_storage_partition_send_rate";
    expect(await sampleValue(registry, name, { service: "table", partition: scopeOf("hot") })).toBe(42.5);
    expect(await sampleValue(registry, name, { service: "table", partition: "other" })).toBe(13);
    expect(await samplesOf(registry, name)).toHaveLength(2);
    // A scope that is no longer paced has no rate: its series goes (a gauge, read at scrape time).
    breaker.paced.splice(0, 1);
    expect(await sampleValue(registry, name, { service: "table", partition: scopeOf("hot") })).toBeUndefined();
  });

  it("reading the rate gives no scope a label: only throttles earn one", async () => {
    const observer = createMetricsObserver("table", { registry, partitionLabel: { topN: 5, minThrottles: 1 } });
    observer.observeCircuits(fakeBreaker([{ scope: scopeOf("hot"), ratePerSecond: 20 }]).source);
    for (let scrape = 0; scrape < 3; scrape++) await registry.metrics();
    expect(await samplesOf(registry, "azure_storage_partition_send_rate")).toEqual([{ labels: { service: "table", partition: "other" }, value: 20 }]);
  });

  it("is absent unless asked for", async () => {
    const observer = createMetricsObserver("table", { registry });
    observer.observeCircuits(fakeBreaker([{ scope: scopeOf("hot"), ratePerSecond: 20 }]).source);
    const text = await registry.metrics();
    expect(text).not.toContain("partition_send_rate");
    expect(text).toContain('azure_storage_paced_partitions{service="table"} 1');
  });
});
