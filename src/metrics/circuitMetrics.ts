import type { CircuitState, CircuitStateSource, CircuitTransition } from "../breaker/circuitStateSource.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { CounterChild, GaugeCollector } from "./metricFamily.js";
import type { StorageMetricFamilies } from "./storageMetricFamilies.js";

/** Reports breakers' circuits on one service's metric families. */
export interface CircuitMetrics {
  /**
   * `circuit_breakers{service,state}` reads `source.stateCounts()` at every scrape, and each
   * transition counts in `circuit_transitions_total{service,to}`. Returns a function that
   * stops both (also done by `dispose()`).
   */
  observe(source: CircuitStateSource): () => void;
  /** Stops reporting every source observed. Counters keep their values. Idempotent. */
  dispose(): void;
}

const CIRCUIT_STATES: readonly CircuitState[] = ["closed", "open", "half_open"];

/** Creates the circuit reporting behind `MetricsObserver.observeCircuits` for `service`. */
export function createCircuitMetrics(families: Pick<StorageMetricFamilies, "circuitBreakers" | "circuitTransitions">, service: StorageService): CircuitMetrics {
  const transitions = new Map<StorageService, Partial<Record<CircuitState, CounterChild>>>();
  const subscriptions = new Set<() => void>();

  const recordTransition = (transition: CircuitTransition): void => {
    // A transition that names no service we know counts under this reporter's.
    const from = STORAGE_SERVICES.includes(transition.service) ? transition.service : service;
    const to = transition.to;
    if (!CIRCUIT_STATES.includes(to)) return;
    let byState = transitions.get(from);
    if (byState === undefined) transitions.set(from, (byState = {}));
    (byState[to] ??= families.circuitTransitions.child({ service: from, to })).inc();
  };

  return {
    observe(source) {
      if (typeof source?.stateCounts !== "function" || typeof source.onTransition !== "function") {
        throw new TypeError("observeCircuits needs a CircuitStateSource (stateCounts() and onTransition()).");
      }
      const collector: GaugeCollector = (emit) => {
        let counts: Record<CircuitState, number>;
        try {
          counts = source.stateCounts();
        } catch (error) {
          logger.warning(`A circuit state source threw during a metrics scrape and was skipped: ${safeErrorCode((error as Error | undefined)?.name) ?? "error"}`);
          return;
        }
        for (const state of CIRCUIT_STATES) emit({ service, state }, counts[state] ?? 0);
      };
      const gauge = families.circuitBreakers;
      gauge.collectors.add(collector);
      const stopListening = source.onTransition(recordTransition);
      let active = true;
      const unsubscribe = (): void => {
        if (!active) return;
        active = false;
        gauge.collectors.delete(collector);
        stopListening();
        subscriptions.delete(unsubscribe);
      };
      subscriptions.add(unsubscribe);
      return unsubscribe;
    },
    dispose() {
      for (const unsubscribe of [...subscriptions]) unsubscribe();
    },
  };
}
