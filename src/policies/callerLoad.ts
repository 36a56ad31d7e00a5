/**
 * Tells a bounded caller (a queue consumer, a worker pool, a semaphore: N operations at a
 * time) from an open one (each request its own caller), from how the client's operations
 * come and go, so that the `"auto"` mode can wait for a partition only where waiting costs
 * nobody else anything.
 *
 * An open-loop caller keeps starting operations while some wait: the operations in flight
 * grow past what the client had busy before. A bounded caller cannot: its operations in
 * flight stay at N, and each one that waits on a partition is one fewer doing other work.
 * So an operation may wait when the caller is growing, or when few enough of its operations
 * already wait (at most {@link MAX_WAITING_SHARE} of those in flight); otherwise it fails at
 * once with `retryAfterInMs`, and its worker moves on.
 */
export class CallerLoad {
  #inFlight = 0;
  /** Operations sleeping: a backoff, a circuit wait or a paced slot. */
  #sleeping = 0;
  /** Of those, waiting on a partition's state (circuit or pacing). */
  #waitingOnPartition = 0;
  /** The most operations busy at once (in flight and not sleeping), over the last one to two windows. */
  #busyPeak = 0;
  #previousBusyPeak = 0;
  #windowStart = -Infinity;

  /** An operation started at `now` (ms). */
  started(now: number): void {
    this.#inFlight += 1;
    if (now - this.#windowStart >= PEAK_WINDOW_IN_MS) {
      this.#previousBusyPeak = now - this.#windowStart < 2 * PEAK_WINDOW_IN_MS ? this.#busyPeak : 0;
      this.#busyPeak = 0;
      this.#windowStart = now;
    }
    this.#busyPeak = Math.max(this.#busyPeak, this.#inFlight - this.#sleeping);
  }

  /** An operation ended. */
  ended(): void {
    this.#inFlight -= 1;
  }

  /** Whether one more operation may wait on a partition now without starving the caller's other work. */
  mayWait(): boolean {
    const growing = this.#inFlight > Math.max(this.#busyPeak, this.#previousBusyPeak);
    return growing || this.#waitingOnPartition + 1 <= MAX_WAITING_SHARE * this.#inFlight;
  }

  /** Brackets a sleep; `onPartition` for a circuit wait or a paced slot, not a backoff. */
  async sleeping<T>(onPartition: boolean, sleep: () => Promise<T>): Promise<T> {
    this.#sleeping += 1;
    if (onPartition) this.#waitingOnPartition += 1;
    try {
      return await sleep();
    } finally {
      this.#sleeping -= 1;
      if (onPartition) this.#waitingOnPartition -= 1;
    }
  }
}

/**
 * The share of a bounded caller's operations that may wait on partitions. 0.2 keeps at
 * least four fifths of its workers on other work (issue 16's bar: 80 % of the healthy work
 * done during an outage), and lets a few wait, so a short outage still costs few failures.
 */
export const MAX_WAITING_SHARE = 0.2;
/** How long a peak of busy operations is remembered: long enough to span an outage's start. */
const PEAK_WINDOW_IN_MS = 10_000;
