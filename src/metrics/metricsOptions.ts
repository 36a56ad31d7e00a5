import type { Registry, RegistryContentType } from "prom-client";
import { defaultRegistry } from "./defaultRegistry.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { optionalNumberOption, validateNumberOption } from "../validation/validateNumberOption.js";
import { optionPath } from "../validation/optionPath.js";
import { describeValue } from "../validation/describeValue.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";
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

/** {@link MetricsOptions} validated and filled in. */
export interface ResolvedMetricsOptions {
  registry: Registry<RegistryContentType>;
  prefix: string;
  partitionLabel: { topN: number; minThrottles: number } | undefined;
  bucketsInSeconds: readonly number[];
}

const KNOWN_KEYS = ["sink", "registry", "prefix", "partitionLabel", "bucketsInSeconds"];
const PARTITION_KEYS = ["topN", "minThrottles"];
const PREFIX_PATTERN = /^(?:[a-zA-Z_:][a-zA-Z0-9_:]*)?$/;

/**
 * Validates metrics options once, with errors that name the option by its path under `path`
 * (`metrics` in `installResilience`, `""` for an observer factory's own options).
 */
export function resolveMetricsOptions(options: MetricsOptions = {}, path = ""): ResolvedMetricsOptions {
  const at = (key: string) => optionPath(path, key);
  validateObjectOption(path || "metrics options", options);
  rejectUnknownKeys(path, options, KNOWN_KEYS);
  // Both sinks named: a mistyped "otel" reaches this check (an "opentelemetry" sink never does).
  if (options.sink !== undefined) validateChoiceOption(at("sink"), options.sink, ["prometheus", "opentelemetry"]);
  // `=== undefined`, not `??`, throughout: null is a mistake to name, not "the default".
  const registry = options.registry === undefined ? defaultRegistry(`The Prometheus metrics sink (${at("registry")}'s default)`) : options.registry;
  if (typeof registry?.getSingleMetric !== "function" || typeof registry.registerMetric !== "function") {
    throw new TypeError(`${at("registry")} must be a prom-client Registry; got ${describeValue(registry)}.`);
  }
  const prefix = options.prefix === undefined ? DEFAULT_METRICS_OPTIONS.prefix : options.prefix;
  if (typeof prefix !== "string" || !PREFIX_PATTERN.test(prefix)) {
    throw new TypeError(`${at("prefix")} must match ${PREFIX_PATTERN.source} (a Prometheus metric name prefix); got ${describeValue(prefix)}.`);
  }
  return {
    registry,
    prefix,
    partitionLabel: resolvePartitionLabel(options.partitionLabel, at("partitionLabel")),
    bucketsInSeconds: resolveBuckets(options.bucketsInSeconds, at("bucketsInSeconds")),
  };
}

/** `partitionLabel` (both sinks), validated; errors name it by `name`, its full path. */
export function resolvePartitionLabel(value: MetricsOptions["partitionLabel"], name: string): ResolvedMetricsOptions["partitionLabel"] {
  if (value === undefined || value === false) return undefined;
  const given = value === true ? {} : validateObjectOption(name, value);
  rejectUnknownKeys(name, given, PARTITION_KEYS);
  const topN = optionalNumberOption(`${name}.topN`, given.topN, DEFAULT_METRICS_OPTIONS.partitionTopN, {
    min: 1,
    max: 1000,
    integer: true,
  });
  const minThrottles = optionalNumberOption(
    `${name}.minThrottles`,
    given.minThrottles,
    DEFAULT_METRICS_OPTIONS.partitionMinThrottles,
    { min: 1, max: 1_000_000, integer: true },
  );
  return { topN, minThrottles };
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
