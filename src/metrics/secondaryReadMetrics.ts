import { CounterFamily, registerFamily, type CounterChild } from "./metricFamily.js";
import { resolveMetricsOptions, type MetricsOptions } from "./metricsOptions.js";
import { OUTCOME_CLASSES, type OutcomeClass } from "../classification/outcomeClass.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { AttemptEvent, RetryObserver } from "../observers/retryEvents.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";

/** Metric names (after the prefix) of the secondary-read counter. Public API, like `METRIC_NAMES`. */
export const SECONDARY_READ_METRIC_NAMES = Object.freeze({
  /** Counter `{service,operation,outcome}`: reads sent to the secondary region, by the class of their answer. */
  secondaryReads: "secondary_reads_total",
} as const);

const HELP = "Reads sent to the secondary region (secondaryReads) while the primary's partition could not serve them, by the class of the answer.";
const LABELS = ["service", "operation", "outcome"] as const;

/**
 * The observer behind `azure_storage_secondary_reads_total`, on the same registry and prefix
 * as the other metrics (`installResilience` adds it when metrics and `secondaryReads` are on).
 * Label values come from small fixed sets: a service, an operation name, an attempt class.
 */
export function createSecondaryReadMetricsObserver(service: StorageService, options: MetricsOptions = {}): RetryObserver {
  validateChoiceOption("service", service, STORAGE_SERVICES);
  const { registry, prefix } = resolveMetricsOptions(options);
  const name = prefix + SECONDARY_READ_METRIC_NAMES.secondaryReads;
  const family = registerFamily(registry, { name, help: HELP, type: "counter", labelNames: LABELS, create: () => new CounterFamily(name, HELP, LABELS) });
  const children = new Map<string, CounterChild>();
  return {
    onAttempt(event: AttemptEvent): void {
      if (event.secondary !== true || !OUTCOME_CLASSES.includes(event.attemptClass as OutcomeClass)) return;
      const operation = event.address.operation;
      const key = `${operation}|${event.attemptClass}`;
      let child = children.get(key);
      if (child === undefined) {
        child = family.child({ service, operation, outcome: event.attemptClass });
        children.set(key, child);
      }
      child.inc();
    },
  };
}
