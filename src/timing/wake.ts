import type { AbortSignalLike } from "@azure/abort-controller";
import { createAbortablePromise } from "@azure/core-util";

/**
 * Something a waiter may be woken by before its sleep ends: its turn in a scope's queue, a
 * partition going out or coming back. `listen` returns a function that stops listening (call it when the
 * sleep ends the other way, so a long outage keeps no finished waiter).
 */
export interface WakeSource {
  listen(wake: () => void): () => void;
}

/**
 * The waiters of one event (a partition going out or coming back, for the operations backing off
 * after a failure there), woken all at once when it happens: each asks the gate again, which
 * hands out turns one by one. Memory is one entry per sleeping waiter, none once they have woken
 * or stopped listening.
 */
export class WakeList implements WakeSource {
  readonly #waiters = new Set<() => void>();

  listen(wake: () => void): () => void {
    this.#waiters.add(wake);
    return () => {
      this.#waiters.delete(wake);
    };
  }

  /** Wakes every waiter listening now; a waiter that listens later waits for the next time. */
  wakeAll(): void {
    if (this.#waiters.size === 0) return;
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }
}

/** A source that fires when either of two does (a backoff after a failure wakes on its partition or its account). */
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
 * Sleeps `delayInMs`, or less when `wake` fires first (resolves `true` then), rejecting with an
 * `AbortError` when `abortSignal` aborts. core-util's `delay` cannot be ended early by anything
 * but an abort, so this builds on the same `createAbortablePromise` with a second way out; the
 * timer and the listener are both gone however it ends.
 */
export function delayUntilWoken(delayInMs: number, wake: WakeSource | undefined, abortSignal: AbortSignalLike | undefined): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopListening: (() => void) | undefined;
  const cleanup = (): void => {
    clearTimeout(timer);
    stopListening?.();
  };
  return createAbortablePromise<boolean>(
    (resolve) => {
      timer = setTimeout(() => {
        cleanup();
        resolve(false);
      }, delayInMs);
      stopListening = wake?.listen(() => {
        cleanup();
        resolve(true);
      });
    },
    { cleanupBeforeAbort: cleanup, abortSignal, abortErrorMsg: "The operation was aborted." },
  );
}
