// The OpenTelemetry sink: its options, its instruments (the OpenTelemetry side of `METRICS`), and
// the recorder's series as instruments of one Meter.
import type * as OpenTelemetryApi from "@opentelemetry/api";
import type { Attributes, Counter, Histogram, Meter, ObservableResult, UpDownCounter } from "@opentelemetry/api";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { choiceOption, hasMethods, isRecord, optionsObject, optionWhere, validateChoiceOption, type OptionsShape } from "../validation/optionSchema.js";
import { assertSameBuckets } from "./metricFamily.js";
import { METRICS, OPEN_TELEMETRY_ATTRIBUTES, type Labels, type MetricKey, type MetricKind } from "./metricNames.js";
import { resolveBuckets, resolvePartitionLabel, type MetricsObserver, type MetricsOptions } from "./metricsObserver.js";
import { MetricsRecorder, NO_SERIES, type MetricSink, type Series } from "./metricsRecorder.js";
import { loadOptionalPeer } from "./optionalPeer.js";
import { readGauge, type GaugeReader } from "./pacingMetrics.js";

/**
 * Options of the OpenTelemetry metrics sink (`installResilience(client, { metrics: { meter } })`).
 * Every one is optional, but `sink` or `meter` must be there to choose this sink.
 */
export interface OpenTelemetryMetricsOptions {
  /** Chooses this sink; implied by `meter`. */
  sink?: "opentelemetry";
  /**
   * The meter the instruments are created on. Defaults to
   * `metrics.getMeter("azure-storage-resilience")` of `@opentelemetry/api` (the global
   * MeterProvider's), which then needs `@opentelemetry/api` installed (an optional peer).
   */
  meter?: Meter;
  /** The opt-in, bounded `azure.storage.partition` attribute, as the Prometheus sink's `partitionLabel`. Defaults to false. */
  partitionLabel?: MetricsOptions["partitionLabel"];
  /** Bucket boundaries (seconds) advised for the duration and delay histograms (a View can override them). Defaults to 5 ms ... 60 s. */
  bucketsInSeconds?: readonly number[];
}

/** Whether `metrics` options choose the OpenTelemetry sink (`sink: "opentelemetry"` or a `meter`); bad values are left to validation. */
export function choosesOpenTelemetry(options: unknown): boolean {
  return isRecord(options) && (options.sink === "opentelemetry" || (options.sink === undefined && "meter" in options));
}

const meter = optionWhere<Meter>(
  hasMethods("createCounter", "createHistogram", "createObservableUpDownCounter", "createObservableGauge"),
  "an OpenTelemetry Meter (from metrics.getMeter() or a MeterProvider)",
);

/**
 * Validates OpenTelemetry sink options once, with errors that name the option by its path
 * under `path` (`metrics` in `installResilience`, `""` for the observer factory's own options).
 */
export const resolveOpenTelemetryMetricsOptions = optionsObject(
  {
    sink: choiceOption(["opentelemetry"]),
    // A null meter is a mistake to name, not "the default".
    meter: (value, path) => meter(value, path) ?? defaultMeter(),
    partitionLabel: resolvePartitionLabel,
    bucketsInSeconds: resolveBuckets,
  } satisfies OptionsShape<OpenTelemetryMetricsOptions>,
  { root: "metrics options", owner: "the OpenTelemetry sink" },
);

function defaultMeter(): Meter {
  const api = loadOptionalPeer<typeof OpenTelemetryApi>("@opentelemetry/api", "The OpenTelemetry metrics sink (metrics.meter's default)");
  return api.metrics.getMeter(OPEN_TELEMETRY_METER_NAME);
}

/** One OpenTelemetry instrument: its name, kind, unit (UCUM) and description. */
export interface OpenTelemetryMetricSpec {
  readonly name: string;
  readonly kind: MetricKind;
  readonly unit: string;
  readonly description: string;
  /** The attribute key of each label. */
  readonly attributes: Readonly<Record<string, string>>;
}

/** A measurement's key: every metric's but `operations`, which OpenTelemetry reads as the count of `operationDuration`. */
export type OpenTelemetryMetricKey = Exclude<MetricKey, "operations">;

/**
 * The OpenTelemetry sink's instruments (the OpenTelemetry side of `METRICS`), after OpenTelemetry's
 * semantic conventions: `.` namespaces under `azure.storage.client`, the unit in `unit`, never in
 * the name, no `_total`. Names and attribute keys are public API, as the Prometheus names are
 * (docs/metrics.md has both side by side).
 */
export const OPEN_TELEMETRY_METRICS: Readonly<Record<OpenTelemetryMetricKey, OpenTelemetryMetricSpec>> = Object.freeze(
  Object.fromEntries(
    Object.entries(METRICS).flatMap(([key, metric]) => {
      if (metric.otel === undefined) return [];
      const attributes = Object.fromEntries(metric.labels.map((label) => [label, metric.attributes?.[label] ?? OPEN_TELEMETRY_ATTRIBUTES[label as keyof typeof OPEN_TELEMETRY_ATTRIBUTES]]));
      return [[key, { name: metric.otel, kind: metric.kind, unit: metric.unit ?? "", description: metric.help, attributes }]];
    }),
  ) as Record<OpenTelemetryMetricKey, OpenTelemetryMetricSpec>,
);

/** The name of the meter the sink uses when given none (`metrics.getMeter(...)` of `@opentelemetry/api`). */
export const OPEN_TELEMETRY_METER_NAME = "azure-storage-resilience";

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
