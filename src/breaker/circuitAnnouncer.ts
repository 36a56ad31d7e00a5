import { logger } from "../logging/logger.js";
import type { CircuitState, CircuitTransition } from "./partitionBreakerInterface.js";
import type { Scope } from "./scope.js";

/** One breaker's transition listeners, and the one place its circuits' changes are logged and delivered, once each. */
export class CircuitAnnouncer {
  readonly #listeners = new Set<(transition: CircuitTransition) => void>();

  /** Logs and delivers `scope`'s circuit moving from what was last announced to `to`, if it moved. */
  announce(scope: Scope, to: CircuitState): void {
    const from = scope.announced;
    if (from === to) return;
    scope.announced = to;
    // An outage probed every few hundred milliseconds goes open → half-open → open again and again: its
    // first opening and its closing are the news (warning), each probe's round is detail (info).
    const routine = to === "half_open" || (to === "open" && from === "half_open");
    (routine ? logger.info : logger.warning)(describeTransition(scope, from, to));
    const event: CircuitTransition = { service: scope.service, scope: scope.key, from, to };
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warning(`A circuit transition listener threw and was ignored: ${(error as Error)?.name ?? "error"}`);
      }
    }
  }

  /** Announces a change made by time alone (open → half-open) where an attempt next meets the circuit; queries announce nothing. */
  observe(scope: Scope, at: number): void {
    this.announce(scope, scope.stateAt(at));
  }

  /** Adds `listener`; returns a function that removes it. */
  onTransition(listener: (transition: CircuitTransition) => void): () => void {
    if (typeof listener !== "function") throw new TypeError("onTransition needs a listener function.");
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  clear(): void {
    this.#listeners.clear();
  }
}

function describeTransition(scope: Scope, from: CircuitState, to: CircuitState): string {
  const account = scope.accountKey === undefined;
  const what = `Circuit for ${account ? "account" : "partition"} scope "${scope.key}"`;
  if (to === "half_open") return `${what} is half-open: one probe may go through.`;
  if (to === "closed") return `${what} closed: the ${account ? "account" : "partition"} serves again.`;
  const why = from === "half_open" ? "the probe failed" : `the ${account ? "account" : "partition"} served nothing through several failures in a row`;
  return `${what} opened (${why}); next probe in ${scope.control.probeIntervalInMs} ms.`;
}
