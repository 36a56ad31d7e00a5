// Telling the log and the transition listeners about a circuit's changes of state, once each.
import type { StorageService } from "../address/partitionScope.js";
import { logger } from "../logging/logger.js";
import type { CircuitState, CircuitTransition } from "./circuitStateSource.js";

/** What the announcer needs of a scope's state: its circuit's state, and what was last said about it. */
export interface AnnouncedScope {
  readonly key: string;
  readonly service: StorageService;
  stateAt(at: number): CircuitState;
  /**
   * The circuit's state as the log and listeners were last told it. Open → half-open happens
   * by time, with no call to return it: it is announced when an attempt next meets the circuit
   * (an admit or a record), where it takes effect; queries announce nothing.
   */
  announced: CircuitState;
}

/** One breaker's transition listeners, and the one place its circuits' changes are logged and delivered. */
export class CircuitAnnouncer {
  readonly #listeners = new Set<(transition: CircuitTransition) => void>();
  readonly #resetTimeoutInMs: number;

  constructor(resetTimeoutInMs: number) {
    this.#resetTimeoutInMs = resetTimeoutInMs;
  }

  /** Logs and delivers `state`'s circuit moving from what was last announced to `to`, if it moved. */
  announce(state: AnnouncedScope, to: CircuitState): void {
    const from = state.announced;
    if (from === to) return;
    state.announced = to;
    // An outage probed every few hundred milliseconds goes open → half-open → open again and again: its
    // first opening and its closing are the news (warning), each probe's round is detail (info).
    const routine = to === "half_open" || (to === "open" && from === "half_open");
    (routine ? logger.info : logger.warning)(describeTransition(state.key, from, to, this.#resetTimeoutInMs));
    const event: CircuitTransition = { service: state.service, scope: state.key, from, to };
    for (const listener of this.#listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warning(`A circuit transition listener threw and was ignored: ${(error as Error)?.name ?? "error"}`);
      }
    }
  }

  /** Reads `state`'s circuit at `at`, announcing the change time made (open → half-open) since the breaker last looked. */
  observe(state: AnnouncedScope, at: number): CircuitState {
    const current = state.stateAt(at);
    this.announce(state, current);
    return current;
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

function describeTransition(key: string, from: CircuitState, to: CircuitState, resetTimeoutInMs: number): string {
  const scope = `Circuit for partition scope "${key}"`;
  if (to === "open") {
    const why = from === "half_open" ? "the probe failed" : "the partition served nothing through several failures in a row";
    return `${scope} opened (${why}); next probe in ${resetTimeoutInMs} ms.`;
  }
  if (to === "half_open") return `${scope} is half-open: one probe may go through.`;
  return `${scope} closed: the partition answers again.`;
}
