import { CounterFamily, registerFamily, type CounterChild } from "../metrics/metricFamily.js";
import { resolveMetricsOptions, type MetricsOptions } from "../metrics/metricsOptions.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { AMBIGUOUS_WRITE_RESULTS } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { AmbiguousWriteEvent, OperationEvent, RetryObserver } from "../observers/retryEvents.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";

/** Metric names (after the prefix) of the data-safety counters. Public API, like `METRIC_NAMES`. */
export const SAFETY_METRIC_NAMES = Object.freeze({
  /** Counter `{service,operation,result}`: writes that ended after an attempt with an unknown outcome, by how they were settled. */
  ambiguousWritesResolved: "ambiguous_writes_resolved_total",
  /** Counter `{service}`: operations that stopped retrying because the client's retry budget was empty. */
  retryBudgetExhausted: "retry_budget_exhausted_total",
} as const);

const HELP = {
  ambiguousWritesResolved:
    "Writes that ended after an attempt with an unknown outcome (reset, timeout), by how they were settled: applied, differs, unresolved, not_resolvable.",
  retryBudgetExhausted: "Operations that surfaced their error without a retry because the client's retry budget was exhausted.",
} as const;

const AMBIGUOUS_LABELS = ["service", "operation", "result"] as const;
const BUDGET_LABELS = ["service"] as const;

/**
 * The observer behind the data-safety counters, on the same registry and prefix as the
 * other metrics (`installResilience` adds it when metrics are on). Label values come from
 * small fixed sets: an operation name, a result, a service.
 */
export function createSafetyMetricsObserver(service: StorageService, options: MetricsOptions = {}): RetryObserver {
  validateChoiceOption("service", service, STORAGE_SERVICES);
  const { registry, prefix } = resolveMetricsOptions(options);
  const counter = (key: keyof typeof SAFETY_METRIC_NAMES, labelNames: readonly string[]): CounterFamily => {
    const name = prefix + SAFETY_METRIC_NAMES[key];
    return registerFamily(registry, { name, help: HELP[key], type: "counter", labelNames, create: () => new CounterFamily(name, HELP[key], labelNames) });
  };
  const ambiguous = counter("ambiguousWritesResolved", AMBIGUOUS_LABELS);
  // Bound at 0 up front, so rate() and alerts see the first budget exhaustion.
  const exhausted = counter("retryBudgetExhausted", BUDGET_LABELS).child({ service });
  const children = new Map<string, CounterChild>();
  return {
    onAmbiguousWrite(event: AmbiguousWriteEvent): void {
      if (!AMBIGUOUS_WRITE_RESULTS.includes(event.result)) return;
      const key = `${event.operation}|${event.result}`;
      let child = children.get(key);
      if (child === undefined) {
        child = ambiguous.child({ service, operation: event.operation, result: event.result });
        children.set(key, child);
      }
      child.inc();
    },
    onOperationEnd(event: OperationEvent): void {
      if (event.stopReason === "budget-exhausted") exhausted.inc();
    },
  };
}
