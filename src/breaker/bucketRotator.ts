import type { EventEmitter } from "node:events";

/** The event opossum's `Status` listens for on a `rotateBucketController`. */
const ROTATE_EVENT = "rotate";

/**
 * One interval that rotates the statistics buckets of every live breaker, handed to
 * opossum as its `rotateBucketController`, so a million scopes never mean a million
 * timers. The interval runs only while at least one breaker listens, and is `unref()`ed.
 */
export interface BucketRotator {
  /** What opossum expects as `rotateBucketController`. */
  readonly controller: EventEmitter;
  /** Breakers currently rotated. */
  readonly listenerCount: number;
  /** Stops the interval and forgets every listener. */
  stop(): void;
}

/**
 * Creates a {@link BucketRotator} ticking every `bucketIntervalInMs`.
 *
 * Not a Node `EventEmitter`: opossum calls only `on`, `removeListener` and
 * `listenerCount(event, listener)` on it, and an EventEmitter does each of those in
 * time linear in its listener count, which makes creating and evicting breakers
 * quadratic at tens of thousands of scopes. A `Set` makes each O(1).
 */
export function createBucketRotator(bucketIntervalInMs: number): BucketRotator {
  const listeners = new Set<() => void>();
  let timer: ReturnType<typeof setInterval> | undefined;

  const tick = (): void => {
    for (const rotate of listeners) rotate();
  };
  const start = (): void => {
    if (timer !== undefined) return;
    timer = setInterval(tick, bucketIntervalInMs);
    timer.unref();
  };
  const stopTimer = (): void => {
    if (timer === undefined) return;
    clearInterval(timer);
    timer = undefined;
  };

  const controller = {
    on(event: string, listener: () => void) {
      if (event !== ROTATE_EVENT) return controller;
      listeners.add(listener);
      start();
      return controller;
    },
    removeListener(event: string, listener: () => void) {
      if (event !== ROTATE_EVENT) return controller;
      listeners.delete(listener);
      if (listeners.size === 0) stopTimer();
      return controller;
    },
    listenerCount(event: string, listener?: () => void): number {
      if (event !== ROTATE_EVENT) return 0;
      if (listener === undefined) return listeners.size;
      return listeners.has(listener) ? 1 : 0;
    },
  };

  return {
    // Duck-typed: the three methods above are all opossum 10's Status uses (a unit test pins this).
    controller: controller as unknown as EventEmitter,
    get listenerCount() {
      return listeners.size;
    },
    stop(): void {
      listeners.clear();
      stopTimer();
    },
  };
}
