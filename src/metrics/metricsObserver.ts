// The Prometheus sink: the recorder's series as prom-client-compatible families on a registry.
import type { Registry, RegistryContentType } from "prom-client";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { PartitionBreaker } from "../breaker/partitionBreaker.js";
import type { RetryObserver } from "../observers/retryEvents.js";
import { validateChoiceOption } from "../validation/optionSchema.js";
import { Family, registerFamily } from "./metricFamily.js";
import { METRICS, THROTTLE_STATUSES, type Labels, type MetricKey } from "./metricNames.js";
import { MetricsRecorder, NO_SERIES, type MetricSink } from "./metricsRecorder.js";
import { resolveMetricsOptions, type MetricsOptions } from "./metricsOptions.js";
import type { TopScopeLabels } from "./topScopeLabels.js";

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
