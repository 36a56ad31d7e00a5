import type { Attributes } from "@opentelemetry/api";
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from "@opentelemetry/sdk-metrics";
import type { Registry } from "prom-client";
import { DEFAULT_METRICS_PREFIX, METRICS, OPEN_TELEMETRY_ATTRIBUTES, THROTTLE_STATUSES, type MetricKey } from "../../src/metrics/metricNames.js";
import { OPEN_TELEMETRY_METRICS, type OpenTelemetryMetricKey } from "../../src/metrics/openTelemetryObserver.js";

/** The OpenTelemetry SDK wired to its in-memory exporter; `collect()` exports once and returns what it got. */
export interface InMemoryMetrics {
  readonly provider: MeterProvider;
  collect(): Promise<MetricData[]>;
  shutdown(): Promise<void>;
}

export function inMemoryMetrics(): InMemoryMetrics {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // A long interval: exports happen on forceFlush, when the test asks.
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    provider,
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      return exporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    },
    shutdown: () => provider.shutdown(),
  };
}

/** The data points of `name` whose attributes include `match`. */
export function pointsOf(metrics: readonly MetricData[], name: string, match: Attributes = {}) {
  const metric = metrics.find((m) => m.descriptor.name === name);
  if (metric === undefined) return [];
  return (metric.dataPoints as Array<{ attributes: Attributes; value: unknown }>).filter((p) =>
    Object.entries(match).every(([key, value]) => p.attributes[key] === value),
  );
}

/** Sum of a counter's (or gauge's) points matching `match`; a histogram's point count. */
export function otelSum(metrics: readonly MetricData[], name: string, match: Attributes = {}): number {
  let sum = 0;
  for (const point of pointsOf(metrics, name, match)) sum += typeof point.value === "number" ? point.value : (point.value as { count: number }).count;
  return sum;
}

/** Prometheus label names of a measurement, by its key. */
function labelsOf(key: string): readonly string[] {
  return METRICS[key as MetricKey]?.labels ?? [];
}

/** A series as `key|label=value,...`, labels in their documented order: both sinks are read into this. */
function seriesKey(key: string, labels: Readonly<Record<string, string | number>>): string {
  return `${key}|${labelsOf(key.replace(/_(count|sum)$/, "")).map((label) => `${label}=${labels[label]}`).join(",")}`;
}

const round = (value: number): number => Math.round(value * 1e9) / 1e9;

/** Every non-zero Prometheus series of the package, as `seriesKey -> value`; histograms as `_count` and `_sum`. */
export async function prometheusSeries(registry: Registry): Promise<Record<string, number>> {
  const names = new Map<string, string>();
  for (const [key, { name }] of Object.entries(METRICS)) if (key !== "secondaryReads") names.set(DEFAULT_METRICS_PREFIX + name, key);
  const series: Record<string, number> = {};
  for (const metric of await registry.getMetricsAsJSON()) {
    const key = names.get(metric.name);
    if (key === undefined) continue;
    for (const value of metric.values as Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>) {
      if (value.value === 0) continue;
      if (String(metric.type) === "histogram") {
        if (value.metricName?.endsWith("_count")) series[seriesKey(`${key}_count`, value.labels)] = value.value;
        if (value.metricName?.endsWith("_sum")) series[seriesKey(`${key}_sum`, value.labels)] = round(value.value);
      } else series[seriesKey(key, value.labels)] = value.value;
    }
  }
  return series;
}

/** The Prometheus label an OpenTelemetry attribute stands for (`http.response.status_code` back to the bounded `status`). */
function labelValue(label: string, attributes: Attributes): string | number {
  const value = attributes[(OPEN_TELEMETRY_ATTRIBUTES as Record<string, string>)[label] ?? label];
  if (label !== "status") return value as string;
  if (value === undefined) return "none";
  return THROTTLE_STATUSES.includes(value as number) ? String(value) : "other";
}

/** Every non-zero OpenTelemetry series of the package, read into the Prometheus series' keys (see docs/metrics.md's table). */
export function openTelemetrySeries(metrics: readonly MetricData[]): Record<string, number> {
  const series: Record<string, number> = {};
  for (const [key, spec] of Object.entries(OPEN_TELEMETRY_METRICS) as Array<[OpenTelemetryMetricKey, (typeof OPEN_TELEMETRY_METRICS)[OpenTelemetryMetricKey]]>) {
    const metric = metrics.find((m) => m.descriptor.name === spec.name);
    if (metric === undefined) continue;
    for (const point of metric.dataPoints as Array<{ attributes: Attributes; value: unknown }>) {
      const labels = (k: string): Record<string, string | number> => Object.fromEntries(labelsOf(k).map((label) => [label, labelValue(label, point.attributes)]));
      if (metric.dataPointType === DataPointType.HISTOGRAM) {
        const { count, sum } = point.value as { count: number; sum: number };
        if (count === 0) continue;
        series[seriesKey(`${key}_count`, labels(key))] = count;
        // A zero sum (operations of no measurable time) is left out, as prometheusSeries leaves out zero samples.
        if (sum !== 0) series[seriesKey(`${key}_sum`, labels(key))] = round(sum);
        // Prometheus counts operations beside the duration histogram; OpenTelemetry reads them from its count.
        if (key === "operationDuration") series[seriesKey("operations", labels("operations"))] = count;
      } else if (point.value !== 0) series[seriesKey(key, labels(key))] = point.value as number;
    }
  }
  return series;
}

