import type * as OpenTelemetryApi from "@opentelemetry/api";
import type { Meter } from "@opentelemetry/api";
import { choiceOption, hasMethods, isRecord, optionsObject, optionWhere, type OptionsShape } from "../validation/optionSchema.js";
import { resolveBuckets, resolvePartitionLabel, type MetricsOptions } from "./metricsOptions.js";
import { OPEN_TELEMETRY_METER_NAME } from "./openTelemetryNames.js";
import { loadOptionalPeer } from "./optionalPeer.js";

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
