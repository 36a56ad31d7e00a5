// The breaker's read-only answers: one scope's status, and every paced scope with its rate.
import type { PacedScope } from "../flow/pacedScope.js";
import type { Pacer } from "../flow/pacer.js";
import type { CircuitState } from "./circuitStateSource.js";
import { HEALTHY_PARTITION, type PartitionStatus } from "./partitionStatus.js";
import type { AnnouncedScope } from "./circuitAnnouncer.js";

/** What the queries read of a scope's state. */
export interface QueriedScope extends AnnouncedScope {
  readonly pacer: Pacer | undefined;
}

/**
 * A scope's status at `at`, its circuit read as `circuitState`; `forgotten` says whether the
 * scope has been calm for `pacing.forgetAfterInMs` (no longer paced, swept or not).
 */
export function statusOfScope<S extends QueriedScope>(state: S, at: number, circuitState: CircuitState, forgotten: (state: S, at: number) => boolean): PartitionStatus {
  const { circuit, pacer } = state;
  if (circuitState !== "closed") {
    return { state: circuitState, available: !circuit.refuses(at), retryAfterInMs: circuit.retryAfterInMs(at) };
  }
  if (pacer === undefined || !pacer.rate.paced || forgotten(state, at)) return HEALTHY_PARTITION;
  const queueInMs = pacer.queueInMs(at);
  return { state: "paced", available: queueInMs === 0, retryAfterInMs: queueInMs, ratePerSecond: pacer.rate.rateAt(at) };
}

/** Every paced partition among `states`, with its rate at `at` (the account gate adds the paced accounts). */
export function pacedScopesOf<S extends QueriedScope>(states: Iterable<S>, at: number, forgotten: (state: S, at: number) => boolean): PacedScope[] {
  const paced: PacedScope[] = [];
  for (const state of states) {
    if (state.pacer?.rate.paced && !forgotten(state, at)) paced.push({ scope: state.key, ratePerSecond: state.pacer.rate.rateAt(at), level: "partition" });
  }
  return paced;
}
