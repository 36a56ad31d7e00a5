import { setTimeout as sleep } from "node:timers/promises";

/** Something to fire at a time, from the start of the run. */
export interface Scheduled {
  atInMs: number;
}

/**
 * Fires `fire(item)` for each item at its time whether or not earlier ones finished (an
 * open loop: the load does not drop when the service slows down, as with real users).
 * Resolves with every fired promise's settlement once the last item has been fired, or
 * early when `signal` aborts. Items must be sorted by time.
 */
export async function runOpenLoop<T extends Scheduled>(
  items: readonly T[],
  fire: (item: T) => Promise<void>,
  options: { signal?: AbortSignal; now?: () => number } = {},
): Promise<Array<Promise<void>>> {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const fired: Array<Promise<void>> = [];
  for (const item of items) {
    if (options.signal?.aborted) break;
    const wait = started + item.atInMs - now();
    if (wait > 1) {
      try {
        await sleep(wait, undefined, { signal: options.signal });
      } catch {
        break;
      }
    }
    fired.push(fire(item));
  }
  return fired;
}
