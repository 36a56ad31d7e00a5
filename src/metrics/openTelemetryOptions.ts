import type * as OpenTelemetryApi from "@opentelemetry/api";
import type { Meter } from "@opentelemetry/api";
import { describeValue } from "../validation/describeValue.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";
import { optionPath } from "../validation/optionPath.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";
import { resolveBuckets, resolvePartitionLabel, type MetricsOptions, type ResolvedMetricsOptions } from "./metricsOptions.js";
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

/** {@link OpenTelemetryMetricsOptions} validated and filled in. */
export interface ResolvedOpenTelemetryMetricsOptions {
  meter: Meter;
  partitionLabel: ResolvedMetricsOptions["partitionLabel"];
  bucketsInSeconds: readonly number[];
}

const KNOWN_KEYS = ["sink", "meter", "partitionLabel", "bucketsInSeconds"];
const METER_METHODS = ["createCounter", "createHistogram", "createObservableUpDownCounter", "createObservableGauge"] as const;

/** Whether `metrics` options choose the OpenTelemetry sink (`sink: "opentelemetry"` or a `meter`); bad values are left to validation. */
export function choosesOpenTelemetry(options: unknown): boolean {
  if (typeof options !== "object" || options === null) return false;
  const given = options as { sink?: unknown; meter?: unknown };
  return given.sink === "opentelemetry" || (given.sink === undefined && "meter" in given);
}

/**
 * Validates OpenTelemetry sink options once, with errors that name the option by its path
 * under `path` (`metrics` in `installResilience`, `""` for the observer factory's own options).
 */
export function resolveOpenTelemetryMetricsOptions(options: OpenTelemetryMetricsOptions = {}, path = ""): ResolvedOpenTelemetryMetricsOptions {
  const at = (key: string) => optionPath(path, key);
  validateObjectOption(path || "metrics options", options);
  rejectUnknownKeys(path, options, KNOWN_KEYS, "the OpenTelemetry sink");
  if (options.sink !== undefined) validateChoiceOption(at("sink"), options.sink, ["opentelemetry"]);
  // `=== undefined`, not `??`: a null meter is a mistake to name, not "the default".
  const meter = options.meter === undefined ? defaultMeter() : options.meter;
  if (typeof meter !== "object" || meter === null || METER_METHODS.some((method) => typeof (meter as unknown as Record<string, unknown>)[method] !== "function")) {
    throw new TypeError(`${at("meter")} must be an OpenTelemetry Meter (from metrics.getMeter() or a MeterProvider); got ${describeValue(meter)}.`);
  }
  return {
    meter,
    partitionLabel: resolvePartitionLabel(options.partitionLabel, at("partitionLabel")),
    bucketsInSeconds: resolveBuckets(options.bucketsInSeconds, at("bucketsInSeconds")),
  };
}

function defaultMeter(): Meter {
  const api = loadOptionalPeer<typeof OpenTelemetryApi>("@opentelemetry/api", "The OpenTelemetry metrics sink (metrics.meter's default)");
  return api.metrics.getMeter(OPEN_TELEMETRY_METER_NAME);
}
