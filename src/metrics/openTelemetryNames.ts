import { METRICS, type MetricKey, type MetricKind } from "./metricNames.js";

/**
 * The attribute key standing for each Prometheus label. `status` becomes the semantic
 * conventions' `http.response.status_code`, an integer (absent when there was no response);
 * `state` and `to` are both the circuit's state (entered, for transitions).
 */
export const OPEN_TELEMETRY_ATTRIBUTES = Object.freeze({
  service: "azure.storage.service",
  operation: "azure.storage.operation.name",
  outcome: "azure.storage.operation.outcome",
  class: "azure.storage.attempt.class",
  reason: "azure.storage.retry.reason",
  status: "http.response.status_code",
  error_code: "azure.storage.error.code",
  state: "azure.storage.circuit.state",
  to: "azure.storage.circuit.state",
  partition: "azure.storage.partition",
  result: "azure.storage.ambiguous_write.result",
} as const);

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
