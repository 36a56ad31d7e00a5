import type { AbortSignalLike } from "@azure/abort-controller";
import { createAbortablePromise } from "@azure/core-util";

/**
 * A woken waiter's turn. It is given back with `done()` once what the waiter was woken for is
 * over (its attempt answered, or it waits or ends again); giving it back twice does nothing.
 */
export interface WakeTurn {
  done(): void;
}

/**
 * Something a waiter may be woken by before its sleep ends: a circuit that closes, a paced
 * queue let out at once. `listen` returns a function that stops listening (call it when the
 * sleep ends the other way, so a long outage keeps no finished waiter).
 */
export interface WakeSource {
  listen(wake: (turn: WakeTurn) => void): () => void;
}

/**
 * How many woken waiters of one list may be out at once. The rest are woken one by one as those
 * give back their turns (as their attempts answer): a backlog comes back as fast as the scope
 * answers (TCP's acknowledgement clock), while the operations that arrive meanwhile, which wait
 * on nothing, meet at most this many of it ahead of them instead of the whole backlog (issue 28:
 * 600 woken at once held newcomers up to 1.3 s at the server). docs/circuit-breaker.md, "Coming back".
 */
export const WAKE_TURNS = 16;

/**
 * The waiters of one thing (a circuit, a paced queue), woken when it happens: a probe that finds
 * a partition back lets the operations waiting on it go at once, {@link WAKE_TURNS} at a time,
 * instead of each finding out at its next poll. Memory is one entry per sleeping waiter, none once
 * they have woken or stopped listening. A woken waiter that never gives its turn back holds it;
 * the ones queued behind it still wake at their own poll.
 */
export class WakeList implements WakeSource {
  readonly #listening = new Set<(turn: WakeTurn) => void>();
  /** Woken (what they waited for happened) but not let go yet: they go as turns come back. */
  readonly #queued = new Set<(turn: WakeTurn) => void>();
  #out = 0;

  listen(wake: (turn: WakeTurn) => void): () => void {
    this.#listening.add(wake);
    return () => {
      this.#listening.delete(wake);
      this.#queued.delete(wake);
    };
  }

  /** Wakes every waiter listening now, at most {@link WAKE_TURNS} out at once; a waiter that listens later waits for the next time. */
  wakeAll(): void {
    if (this.#listening.size === 0) return;
    for (const wake of this.#listening) this.#queued.add(wake);
    this.#listening.clear();
    this.#letGo();
  }

  #letGo(): void {
    while (this.#out < WAKE_TURNS && this.#queued.size > 0) {
      const wake = this.#queued.values().next().value as (turn: WakeTurn) => void;
      this.#queued.delete(wake);
      this.#out += 1;
      let given = false;
      wake({
        done: () => {
          if (given) return;
          given = true;
          this.#out -= 1;
          this.#letGo();
        },
      });
    }
  }
}

/** A source that fires when either of two does (a slot of a paced partition in a paced account waits for both). */
export function eitherWake(a: WakeSource | undefined, b: WakeSource | undefined): WakeSource | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return {
    listen(wake) {
      const stopA = a.listen(wake);
      const stopB = b.listen(wake);
      return () => {
        stopA();
        stopB();
      };
    },
  };
}

/**
 * Sleeps `delayInMs`, or less when `wake` fires first (resolves with the waiter's turn then, to
 * give back when it is over), rejecting with an `AbortError` when `abortSignal` aborts. core-util's
 * `delay` cannot be ended early by anything but an abort, so this builds on the same
 * `createAbortablePromise` with a second way out; the timer and the listener are both gone however it ends.
 */
export function delayUntilWoken(delayInMs: number, wake: WakeSource | undefined, abortSignal: AbortSignalLike | undefined): Promise<WakeTurn | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopListening: (() => void) | undefined;
  let settled = false;
  const cleanup = (): void => {
    settled = true;
    clearTimeout(timer);
    stopListening?.();
  };
  return createAbortablePromise<WakeTurn | undefined>(
    (resolve) => {
      timer = setTimeout(() => {
        cleanup();
        resolve(undefined);
      }, delayInMs);
      stopListening = wake?.listen((turn) => {
        // Woken by a second source after the first: this turn is not needed.
        if (settled) return turn.done();
        cleanup();
        resolve(turn);
      });
    },
    { cleanupBeforeAbort: cleanup, abortSignal, abortErrorMsg: "The operation was aborted." },
  );
}
