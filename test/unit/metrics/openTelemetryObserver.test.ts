import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { metrics as otelMetrics } from "@opentelemetry/api";
import { Registry, register } from "prom-client";
import { createMetricsObserver, createOpenTelemetryMetricsObserver, fixedBackoff, installResilience, resilientRetryPolicy, type RetryObserver } from "../../../src/index.js";
import { OPEN_TELEMETRY_ATTRIBUTES as ATTR } from "../../../src/metrics/metricNames.js";
import { OPEN_TELEMETRY_METRICS as OTEL } from "../../../src/metrics/openTelemetryObserver.js";
import { asGateOption, gateOf, waitOf } from "../../support/scriptedGate.js";
import type { CircuitState, CircuitStateSource, CircuitTransition } from "../../../src/breaker/partitionBreakerInterface.js";
import { createEmptyPipeline } from "@azure/core-rest-pipeline";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { internal, notFound, ok, request, scripted, serverBusy, timedOut, type Step } from "./metricsTestKit.js";
import { inMemoryMetrics, openTelemetrySeries, otelSum, pointsOf, prometheusSeries, type InMemoryMetrics } from "../../support/openTelemetryMetrics.js";

let sdk: InMemoryMetrics;
beforeEach(() => {
  sdk = inMemoryMetrics();
  vi.useFakeTimers();
});
afterEach(async () => {
  vi.useRealTimers();
  await sdk.shutdown();
});

/** Exports once (on real timers: the SDK's flush sets its own timeout). */
async function collect() {
  vi.useRealTimers();
  return sdk.collect();
}

async function run(observers: RetryObserver[], steps: Step[], maxRetries = 3) {
  const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries, delayInMs: 100 }), observers });
  const pending = policy.sendRequest(request(), scripted(...steps)).then((r) => r.status, (e: unknown) => e);
  await vi.runAllTimersAsync();
  return pending;
}

const entity = { [ATTR.service]: "table", [ATTR.operation]: "get_entity" };

describe("createOpenTelemetryMetricsObserver, read through the SDK's in-memory exporter", () => {
  it("503 ServerBusy twice then 200: attempts, retries, throttles and one operation, named by OpenTelemetry's conventions", async () => {
    const observer = createOpenTelemetryMetricsObserver("table", { meter: sdk.provider.getMeter("test") });
    expect(await run([observer], [serverBusy, serverBusy, ok])).toBe(200);
    const metrics = await collect();

    expect(otelSum(metrics, OTEL.attempts.name, { ...entity, [ATTR.class]: "throttled" })).toBe(2);
    expect(otelSum(metrics, OTEL.attempts.name, { ...entity, [ATTR.class]: "success" })).toBe(1);
    expect(otelSum(metrics, OTEL.retries.name, { ...entity, [ATTR.reason]: "throttled" })).toBe(2);
    // The status is the conventions' integer attribute, the error code our bounded one.
    expect(pointsOf(metrics, OTEL.throttles.name).map((p) => p.attributes)).toEqual([
      { ...entity, "http.response.status_code": 503, [ATTR.error_code]: "ServerBusy" },
    ]);
    expect(otelSum(metrics, OTEL.throttles.name)).toBe(2);
    const [duration] = pointsOf(metrics, OTEL.operationDuration.name, { ...entity, [ATTR.outcome]: "success" });
    expect(duration?.value).toMatchObject({ count: 1 });
    expect((duration?.value as { sum: number }).sum).toBeCloseTo(0.2, 2);
    const [delay] = pointsOf(metrics, OTEL.retryDelay.name, { [ATTR.service]: "table", [ATTR.reason]: "throttled" });
    expect(delay?.value).toMatchObject({ count: 2, sum: 0.2 });

    const descriptor = (name: string) => metrics.find((m) => m.descriptor.name === name)?.descriptor;
    expect(descriptor(OTEL.operationDuration.name)).toMatchObject({ unit: "s", type: "HISTOGRAM" });
    expect(descriptor(OTEL.attempts.name)).toMatchObject({ unit: "{attempt}", type: "COUNTER" });
    // The advised buckets, in seconds: 5 ms ... 60 s.
    const boundaries = (delay?.value as { buckets: { boundaries: number[] } }).buckets.boundaries;
    expect(boundaries[0]).toBe(0.005);
    expect(boundaries.at(-1)).toBe(60);
  });

  it("local waits and refusals: the up-down counter goes up and back down around a circuit wait, the counter counts a failFast refusal", async () => {
    const observer = createOpenTelemetryMetricsObserver("table", { meter: sdk.provider.getMeter("test") });
    const waits: number[] = [];
    const watcher: RetryObserver = { onLocalWait: (e) => void waits.push(e.state === "started" ? 1 : -1) };
    const refuse = { decision: "refuse", reason: "circuit-open", scope: "table|acct|orders|p1", retryAfterInMs: 1000 } as const;
    const gate = gateOf(waitOf("circuit", 1000));
    const waiting = resilientRetryPolicy({ observers: [observer, watcher], gate: asGateOption(gate), random: () => 0 }).sendRequest(request(), scripted(ok));
    await vi.advanceTimersByTimeAsync(1000);
    expect((await waiting).status).toBe(200);
    expect(waits).toEqual([1, -1]);
    const refused = await resilientRetryPolicy({ observers: [observer], gate: asGateOption({ admit: () => refuse, record: () => undefined }), caller: { failFast: true } })
      .sendRequest(request(), scripted())
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: "CIRCUIT_OPEN" });
    const metrics = await collect();
    const circuit = { [ATTR.service]: "table", [ATTR.reason]: "circuit" };
    expect(pointsOf(metrics, OTEL.localWaits.name, circuit)).toHaveLength(1);
    expect(otelSum(metrics, OTEL.localWaits.name, circuit)).toBe(0);
    expect(metrics.find((m) => m.descriptor.name === OTEL.localWaits.name)?.descriptor).toMatchObject({ unit: "{operation}", type: "UP_DOWN_COUNTER" });
    expect(otelSum(metrics, OTEL.localRefusals.name, circuit)).toBe(1);
  });

  it("reports the same numbers as the Prometheus sink for the same operations", async () => {
    const registry = new Registry();
    const observers = [
      createMetricsObserver("table", { registry }),
      createOpenTelemetryMetricsObserver("table", { meter: sdk.provider.getMeter("test") }),
    ];
    await run(observers, [serverBusy, serverBusy, ok]);
    await run(observers, [timedOut, internal, ok]);
    await run(observers, [serverBusy, serverBusy], 1); // exhausted
    await run(observers, [notFound]);
    const prometheus = await prometheusSeries(registry);
    const openTelemetry = openTelemetrySeries(await collect());
    expect(Object.keys(prometheus).length).toBeGreaterThan(10);
    expect(openTelemetry).toEqual(prometheus);
    expect(prometheus["retriesExhausted|service=table,operation=get_entity,class=throttled"]).toBe(1);
  });

  it("counts reads answered by the secondary region (secondaryReads) in secondary_reads, beside attempts", async () => {
    const observer = createOpenTelemetryMetricsObserver("table", { meter: sdk.provider.getMeter("test") });
    const req = request();
    const base = { request: req, address: readRequestAddress(req, "table"), durationInMs: 1, pacedDelayInMs: 0 };
    observer.onAttempt?.({ ...base, attempt: 1, attemptClass: "throttled", status: 503, errorCode: "ServerBusy" });
    observer.onAttempt?.({ ...base, attempt: 2, attemptClass: "success", status: 200, secondary: true });
    const metrics = await collect();
    expect(otelSum(metrics, OTEL.secondaryReads.name, { ...entity, [ATTR.class]: "success" })).toBe(1);
    expect(otelSum(metrics, OTEL.secondaryReads.name)).toBe(1);
    expect(otelSum(metrics, OTEL.attempts.name)).toBe(2);
  });

  it("sums the circuits of every breaker observed on one meter, and forgets one when its observer is disposed", async () => {
    const meter = sdk.provider.getMeter("test");
    const first = createOpenTelemetryMetricsObserver("table", { meter });
    const second = createOpenTelemetryMetricsObserver("table", { meter });
    const a = fakeSource({ closed: 1, open: 2, half_open: 0 });
    const b = fakeSource({ closed: 0, open: 1, half_open: 1 });
    first.observeCircuits(a.source);
    second.observeCircuits(b.source);
    a.emit({ scope: "s", service: "table", from: "closed", to: "open" });
    b.emit({ scope: "t", service: "table", from: "closed", to: "open" });
    let metrics = await collect();
    expect(otelSum(metrics, OTEL.circuitBreakers.name, { [ATTR.state]: "open" })).toBe(3);
    expect(otelSum(metrics, OTEL.circuitBreakers.name, { [ATTR.state]: "half_open" })).toBe(1);
    expect(otelSum(metrics, OTEL.circuitTransitions.name, { [ATTR.to]: "open" })).toBe(2);

    second.dispose();
    b.emit({ scope: "t", service: "table", from: "open", to: "half_open" });
    metrics = await sdk.collect();
    expect(otelSum(metrics, OTEL.circuitBreakers.name, { [ATTR.state]: "open" })).toBe(2);
    expect(otelSum(metrics, OTEL.circuitTransitions.name, { [ATTR.to]: "half_open" })).toBe(0);
    expect(b.listeners()).toBe(0);
  });

  it("uses the global MeterProvider's meter when asked for the sink without a meter", async () => {
    otelMetrics.setGlobalMeterProvider(sdk.provider);
    try {
      const observer = createOpenTelemetryMetricsObserver("queue", { sink: "opentelemetry" });
      await run([observer], [ok]);
      const metrics = await collect();
      expect(otelSum(metrics, OTEL.attempts.name, { [ATTR.service]: "queue", [ATTR.class]: "success" })).toBe(1);
    } finally {
      otelMetrics.disable();
    }
  });
});

describe("choosing the sink in installResilience", () => {
  it("metrics: { meter } records on the meter and registers nothing on a Prometheus registry", async () => {
    const pipeline = createEmptyPipeline();
    const handle = installResilience(pipeline, { service: "blob", metrics: { meter: sdk.provider.getMeter("test") } });
    try {
      const next = scripted(ok);
      const pending = handle.retryPolicy.sendRequest(request({ url: "https://acct.blob.core.windows.net/c/b" }), next);
      await vi.runAllTimersAsync();
      await pending;
      const metrics = await collect();
      expect(otelSum(metrics, OTEL.attempts.name, { [ATTR.service]: "blob", [ATTR.operation]: "download_blob" })).toBe(1);
      expect(handle.metrics).toBeDefined();
      expect(register.getSingleMetric("azure_storage_attempts_total")).toBeUndefined();
      expect(register.getSingleMetric("azure_storage_ambiguous_writes_resolved_total")).toBeUndefined();
    } finally {
      handle.dispose();
    }
  });

  it.each([
    [{ meter: null }, "metrics.meter must be an OpenTelemetry Meter (from metrics.getMeter() or a MeterProvider); got null."],
    [{ meter: {} }, "metrics.meter must be an OpenTelemetry Meter (from metrics.getMeter() or a MeterProvider); got an object."],
    [{ sink: "statsd" }, 'metrics.sink must be one of "prometheus", "opentelemetry"; got "statsd".'],
    [{ sink: "otel" }, 'metrics.sink must be one of "prometheus", "opentelemetry"; got "otel".'],
    [{ sink: "opentelemetry", registry: new Registry() }, "metrics.registry is not a known option of the OpenTelemetry sink; known options are sink, meter, partitionLabel, bucketsInSeconds."],
    [{ sink: "opentelemetry", bucketsInSeconds: [] }, "metrics.bucketsInSeconds must be a non-empty array of increasing positive numbers."],
  ])("refuses %o with a TypeError naming the option", (metrics, message) => {
    expect(() => installResilience(createEmptyPipeline(), { service: "table", metrics: metrics as never })).toThrow(new TypeError(message));
  });

  it("refuses a second install on one meter with other buckets", () => {
    const meter = sdk.provider.getMeter("test");
    createOpenTelemetryMetricsObserver("table", { meter });
    expect(() => createOpenTelemetryMetricsObserver("table", { meter, bucketsInSeconds: [1, 2] })).toThrow(/same metrics.bucketsInSeconds/);
  });
});

function fakeSource(counts: Record<CircuitState, number>) {
  const listeners = new Set<(t: CircuitTransition) => void>();
  const source: CircuitStateSource = {
    stateCounts: () => counts,
    onTransition(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return { source, emit: (t: CircuitTransition) => listeners.forEach((l) => l(t)), listeners: () => listeners.size };
}
