import type { StorageService } from "../address/partitionScope.js";

/**
 * The states a partition's circuit can be in, as metrics and logs name them. The public
 * `PartitionBreaker` spells the union out, one name less in the API.
 */
export type CircuitState = "closed" | "open" | "half_open";

/** One circuit's change of state. `scope` is the partition's scope key (no secrets). */
export interface CircuitTransition {
  service: StorageService;
  scope: string;
  from: CircuitState;
  to: CircuitState;
}

/**
 * What the breaker layer offers the metrics layer (and debugging): how many live circuits
 * are in each state, and a stream of transitions.
 */
export interface CircuitStateSource {
  /** Live circuits per state, right now. */
  stateCounts(): Record<CircuitState, number>;
  /** Calls `listener` on every transition; returns a function that unsubscribes. */
  onTransition(listener: (transition: CircuitTransition) => void): () => void;
}
