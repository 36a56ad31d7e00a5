// The Prometheus sink: its options (and the checks both sinks share), and the recorder's series as
// prom-client-compatible families on a registry.
import type { Registry, RegistryContentType } from "prom-client";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { PartitionBreaker } from "../breaker/partitionBreaker.js";
import type { RetryObserver } from "../observers/retryEvents.js";
import { describeValue } from "../validation/describeValue.js";
import {
  choiceOption,
  hasMethods,
  numberOption,
  optionsObject,
  optionWhere,
  validateChoiceOption,
  validateNumberOption,
  type OptionCheck,
  type OptionsShape,
} from "../validation/optionSchema.js";
import { Family, registerFamily } from "./metricFamily.js";
import { DEFAULT_METRICS_PREFIX, DEFAULT_SECONDS_BUCKETS, METRICS, THROTTLE_STATUSES, type Labels, type MetricKey } from "./metricNames.js";
import { MetricsRecorder, NO_SERIES, type MetricSink } from "./metricsRecorder.js";
import { defaultRegistry } from "./optionalPeer.js";
import type { TopScopeLabels } from "./topScopeLabels.js";

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

/** A {@link RetryObserver} that records the package's metrics for one service, on Prometheus or OpenTelemetry. */
export interface MetricsObserver extends RetryObserver {
  /** The `service` label of everything this observer records. */
  readonly service: StorageService;
  /**
   * Reports a breaker's circuits (a `PartitionBreaker`, or anything with its `stateCounts()` and `onTransition()`): `circuit_breakers{service,state}` reads `stateCounts()` at
   * every scrape, and each transition counts in `circuit_transitions_total{service,to}`. A
   * source that also has `pacedScopes()` (a `PartitionBreaker` does) reports its pacing too:
   * `paced_partitions{service}`, and with the partition label on,
   * `partition_send_rate{service,partition}`, both read at scrape time.
   * Returns a function that stops all of them (also done by `dispose()`).
   */
  observeCircuits(breaker: Pick<PartitionBreaker, "stateCounts" | "onTransition"> & Partial<Pick<PartitionBreaker, "pacedScopes">>): () => void;
  /** Stops reporting circuits and pacing. Counters keep their values; recording hooks keep working. Idempotent. */
  dispose(): void;
}

/**
 * Creates the observer that `installResilience` appends to the retry policy (exported for
 * hand-built pipelines): every metric of docs/metrics.md, the data-safety and secondary-read
 * counters included. Families are found or registered on `options.registry` (default:
 * prom-client's `register`); creating many observers on one registry shares them.
 *
 * @example
 * const metrics = createMetricsObserver("table", { registry });
 * pipeline.addPolicy(resilientRetryPolicy({ observers: [metrics] }), { phase: "Retry" });
 */
export function createMetricsObserver(service: StorageService, options: MetricsOptions = {}): MetricsObserver {
  return createPrometheusObserver(service, options, true);
}

/**
 * {@link createMetricsObserver}, for `installResilience`: the secondary-read counter is
 * registered only when reads may go to the secondary (`withSecondaryReads`).
 */
export function createPrometheusObserver(service: StorageService, options: MetricsOptions, withSecondaryReads: boolean): MetricsObserver {
  validateChoiceOption("service", service, STORAGE_SERVICES);
  const { registry, prefix, bucketsInSeconds, partitionLabel } = resolveMetricsOptions(options, "");
  const enabled = { partitionLabel: partitionLabel !== undefined, secondaryReads: withSecondaryReads };
  return new MetricsRecorder(service, prometheusSink(registry, prefix, bucketsInSeconds, enabled), partitionLabel);
}

/** The partition labels of each registry and prefix, by their `operations` family (always registered). */
const partitionLabels = new WeakMap<Family, Map<StorageService, TopScopeLabels>>();

/** Finds or registers every family the options turn on (see {@link registerFamily}), and adapts the recorder to them. */
function prometheusSink(
  registry: Registry<RegistryContentType>,
  prefix: string,
  bucketsInSeconds: readonly number[],
  enabled: { partitionLabel: boolean; secondaryReads: boolean },
): MetricSink {
  const families: Partial<Record<MetricKey, Family>> = {};
  for (const [key, metric] of Object.entries(METRICS) as Array<[MetricKey, (typeof METRICS)[MetricKey]]>) {
    if (metric.only !== undefined && !enabled[metric.only]) continue;
    const type = metric.kind === "counter" || metric.kind === "histogram" ? metric.kind : "gauge";
    families[key] = registerFamily(registry, new Family(type, prefix + metric.name, metric.help, metric.labels, bucketsInSeconds));
  }
  const operations = families.operations as Family;
  let labels = partitionLabels.get(operations);
  if (labels === undefined) partitionLabels.set(operations, (labels = new Map()));
  return {
    series: (metric, labels) => families[metric]?.child(labelValues(labels)) ?? NO_SERIES,
    readers: (metric) => families[metric]?.collectors ?? new Set(),
    partitionLabels: labels,
  };
}

/** Label values as Prometheus writes them: the `status` label bounded to the statuses that keep their own value. */
function labelValues(labels: Labels): Readonly<Record<string, string>> {
  if (!("status" in labels)) return labels as Readonly<Record<string, string>>;
  const status = labels.status;
  const value = status === undefined ? "none" : THROTTLE_STATUSES.includes(status as number) ? String(status) : "other";
  return { ...labels, status: value } as Readonly<Record<string, string>>;
}
