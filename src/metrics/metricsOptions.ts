import type { Registry, RegistryContentType } from "prom-client";
import { defaultRegistry } from "./optionalPeer.js";
import { describeValue } from "../validation/describeValue.js";
import { choiceOption, hasMethods, numberOption, optionsObject, optionWhere, validateNumberOption, type OptionCheck, type OptionsShape } from "../validation/optionSchema.js";
import { DEFAULT_METRICS_PREFIX, DEFAULT_SECONDS_BUCKETS } from "./metricNames.js";

/** Options of the Prometheus metrics sink (`installResilience(client, { metrics })`). Every one is optional. */
export interface MetricsOptions {
  /** Which sink: `"prometheus"` (prom-client). Defaults to `"prometheus"`; see `OpenTelemetryMetricsOptions` for the other. */
  sink?: "prometheus";
  /**
   * Where the metric families go. Defaults to prom-client's default registry (`register`),
   * which apps already expose. prom-client is an optional peer dependency: install it for this sink.
   */
  registry?: Registry<RegistryContentType>;
  /** Prefix of every metric name. Defaults to `"azure_storage_"`. */
  prefix?: string;
  /**
   * Adds `<prefix>partition_throttles_total{service,partition}` with a bounded partition label:
   * `true` for the defaults, or the bounds. Off by default: partition scopes name tables,
   * containers and partition keys, which can be business data. Defaults to false.
   */
  partitionLabel?:
    | boolean
    | {
        /** How many partition scopes per service get their own label value; the rest count as `other`. Defaults to 10. */
        topN?: number;
        /** Throttles a scope needs before it earns a label, so one-off throttles do not take the slots. Defaults to 3. */
        minThrottles?: number;
      };
  /** Bucket upper bounds (seconds) of the duration and delay histograms. Defaults to 5 ms ... 60 s. */
  bucketsInSeconds?: readonly number[];
}

/** The opt-in, bounded `partition` label's bounds (see docs/metrics.md for its cost). */
export type PartitionLabelOptions = Exclude<MetricsOptions["partitionLabel"], boolean | undefined>;

/** Defaults of {@link MetricsOptions}. */
export const DEFAULT_METRICS_OPTIONS = Object.freeze({
  prefix: DEFAULT_METRICS_PREFIX,
  partitionLabel: false,
  bucketsInSeconds: DEFAULT_SECONDS_BUCKETS,
  partitionTopN: 10,
  partitionMinThrottles: 3,
});

const PREFIX_PATTERN = /^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?$/;

const checkPartitionLabel = optionsObject({
  topN: numberOption({ min: 1, max: 1000, integer: true }, DEFAULT_METRICS_OPTIONS.partitionTopN),
  minThrottles: numberOption({ min: 1, max: 1_000_000, integer: true }, DEFAULT_METRICS_OPTIONS.partitionMinThrottles),
} satisfies OptionsShape<PartitionLabelOptions>);

/** `partitionLabel` (both sinks), validated; errors name it by `name`, its full path. */
export function resolvePartitionLabel(value: unknown, name: string): ReturnType<typeof checkPartitionLabel> | undefined {
  if (value === undefined || value === false) return undefined;
  return checkPartitionLabel(value === true ? {} : value, name);
}

/** `bucketsInSeconds` (both sinks), validated; errors name it by `name`, its full path. */
export function resolveBuckets(value: unknown, name: string): readonly number[] {
  if (value === undefined) return DEFAULT_METRICS_OPTIONS.bucketsInSeconds;
  if (!Array.isArray(value) || value.length === 0) {
    throw new TypeError(`${name} must be a non-empty array of increasing positive numbers.`);
  }
  let previous = 0;
  for (const [index, bound] of value.entries()) {
    validateNumberOption(`${name}[${index}]`, bound, { min: Number.MIN_VALUE });
    if ((bound as number) <= previous) {
      throw new RangeError(`${name} must increase; got ${bound} after ${previous}.`);
    }
    previous = bound as number;
  }
  return Object.freeze([...(value as number[])]);
}

const prefix: OptionCheck<string> = (value, path) => {
  // `=== undefined`, not `??`: null is a mistake to name, not "the default".
  if (value === undefined) return DEFAULT_METRICS_OPTIONS.prefix;
  if (typeof value !== "string" || !PREFIX_PATTERN.test(value)) {
    throw new TypeError(`${path} must match ${PREFIX_PATTERN.source} (a Prometheus metric name prefix); got ${describeValue(value)}.`);
  }
  return value;
};

const registry = optionWhere<Registry<RegistryContentType>>(hasMethods("getSingleMetric", "registerMetric"), "a prom-client Registry");

/**
 * Validates metrics options once, with errors that name the option by its path under `path`
 * (`metrics` in `installResilience`, `""` for an observer factory's own options).
 */
export const resolveMetricsOptions = optionsObject(
  {
    // Both sinks named: a mistyped "otel" reaches this check (an "opentelemetry" sink never does).
    sink: choiceOption(["prometheus", "opentelemetry"]),
    registry: (value, path) => registry(value, path) ?? defaultRegistry(`The Prometheus metrics sink (${path}'s default)`),
    prefix,
    partitionLabel: resolvePartitionLabel,
    bucketsInSeconds: resolveBuckets,
  } satisfies OptionsShape<MetricsOptions>,
  { root: "metrics options" },
);

