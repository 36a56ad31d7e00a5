// The OpenTelemetry sink: the recorder's series as instruments of one Meter.
import type { Attributes, Counter, Histogram, Meter, ObservableResult, UpDownCounter } from "@opentelemetry/api";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { validateChoiceOption } from "../validation/optionSchema.js";
import { assertSameBuckets } from "./metricFamily.js";
import type { Labels, MetricKey } from "./metricNames.js";
import { MetricsRecorder, NO_SERIES, type MetricSink, type Series } from "./metricsRecorder.js";
import type { MetricsObserver } from "./metricsObserver.js";
import { OPEN_TELEMETRY_METRICS, type OpenTelemetryMetricKey, type OpenTelemetryMetricSpec } from "./openTelemetryNames.js";
import { resolveOpenTelemetryMetricsOptions, type OpenTelemetryMetricsOptions } from "./openTelemetryOptions.js";
import { readGauge, type GaugeReader } from "./pacingMetrics.js";

/**
 * Creates the observer that records the package's metrics on an OpenTelemetry Meter for
 * `service`: the same measurements as the Prometheus sink, named by OpenTelemetry's
 * conventions (`OPEN_TELEMETRY_METRICS`, docs/metrics.md). `installResilience(client, { metrics: { meter } })`
 * adds it; call it yourself for a hand-built pipeline, or to record on both sinks at once.
 * Instruments are created once per meter and shared by every observer on it.
 *
 * @example
 * const observer = createOpenTelemetryMetricsObserver("table", { meter: meterProvider.getMeter("app") });
 * pipeline.addPolicy(resilientRetryPolicy({ observers: [observer] }), { phase: "Retry" });
 */
export function createOpenTelemetryMetricsObserver(service: StorageService, options: OpenTelemetryMetricsOptions = {}): MetricsObserver {
  validateChoiceOption("service", service, STORAGE_SERVICES);
  const resolved = resolveOpenTelemetryMetricsOptions(options, "");
  return new MetricsRecorder(service, openTelemetrySink(resolved.meter, resolved.bucketsInSeconds), resolved.partitionLabel);
}

type Instrument = Counter | UpDownCounter | Histogram;

/**
 * One sink per meter, shared by every observer on it: OpenTelemetry keeps one series per attribute
 * set, and an observable's callback reports the whole value, so it must sum every observer's breakers.
 */
const sinks = new WeakMap<Meter, MetricSink & { bucketsInSeconds: readonly number[] }>();

function openTelemetrySink(meter: Meter, bucketsInSeconds: readonly number[]): MetricSink {
  const existing = sinks.get(meter);
  if (existing !== undefined) {
    assertSameBuckets("The OpenTelemetry instruments on this meter are", existing.bucketsInSeconds, bucketsInSeconds, "meter");
    return existing;
  }
  const instruments = new Map<MetricKey, Instrument>();
  const readers = new Map<MetricKey, Set<GaugeReader>>();
  for (const [key, spec] of Object.entries(OPEN_TELEMETRY_METRICS) as Array<[OpenTelemetryMetricKey, OpenTelemetryMetricSpec]>) {
    const options = { unit: spec.unit, description: spec.description };
    if (spec.kind === "counter") instruments.set(key, meter.createCounter(spec.name, options));
    else if (spec.kind === "upDownCounter") instruments.set(key, meter.createUpDownCounter(spec.name, options));
    else if (spec.kind === "histogram") {
      instruments.set(key, meter.createHistogram(spec.name, { ...options, advice: { explicitBucketBoundaries: [...bucketsInSeconds] } }));
    } else {
      const observable = spec.kind === "observableGauge" ? meter.createObservableGauge(spec.name, options) : meter.createObservableUpDownCounter(spec.name, options);
      const sources = new Set<GaugeReader>();
      readers.set(key, sources);
      observable.addCallback((result: ObservableResult) => {
        for (const { labels, value } of readGauge(sources)) result.observe(value, attributesOf(spec, labels));
      });
    }
  }
  const sink = {
    bucketsInSeconds,
    partitionLabels: new Map(),
    readers: (metric: MetricKey) => readers.get(metric) ?? new Set<GaugeReader>(),
    series(metric: MetricKey, labels: Labels): Series {
      const instrument = instruments.get(metric);
      if (instrument === undefined) return NO_SERIES;
      // Made once per series and passed as it is: the API has no bound instruments, but nothing is allocated per event.
      const spec = OPEN_TELEMETRY_METRICS[metric as OpenTelemetryMetricKey];
      const attributes = attributesOf(spec, labels);
      if (spec.kind === "histogram") return { record: (value) => (instrument as Histogram).record(value, attributes) };
      return { record: (value) => (instrument as Counter | UpDownCounter).add(value, attributes) };
    },
  };
  sinks.set(meter, sink);
  return sink;
}

/** The attributes standing for `labels`; the status, an integer in the conventions, is absent without a response. */
function attributesOf(spec: OpenTelemetryMetricSpec, labels: Labels): Attributes {
  const attributes: Attributes = {};
  for (const [label, value] of Object.entries(labels)) {
    if (value !== undefined) attributes[spec.attributes[label] ?? label] = value;
  }
  return attributes;
}
