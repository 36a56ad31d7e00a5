/** Events are counted in buckets this long; the rate is read over the current and the previous one. */
export const BUCKET_IN_MS = 500;

/** A rate in constant memory: events counted in two half-second buckets; `now` is passed in. */
export class RateMeter {
  #bucketStart: number;
  #current = 0;
  #previous = 0;
  readonly #since: number;

  constructor(now: number) {
    this.#bucketStart = now;
    this.#since = now;
  }

  count(now: number): void {
    this.#roll(now);
    this.#current += 1;
  }

  /** How long the rate is read over: one to two buckets, less while the meter is younger. */
  spanInMs(now: number): number {
    this.#roll(now);
    return Math.min(now - this.#since, now - this.#bucketStart + BUCKET_IN_MS);
  }

  /** Events per second over the last one to two buckets (0 before any). */
  ratePerSecond(now: number): number {
    // The span first: reading it rolls the buckets.
    const spanInMs = this.spanInMs(now);
    return ((this.#current + this.#previous) * 1000) / Math.max(spanInMs, 1);
  }

  #roll(now: number): void {
    const elapsed = now - this.#bucketStart;
    if (elapsed < BUCKET_IN_MS) return;
    this.#previous = elapsed < 2 * BUCKET_IN_MS ? this.#current : 0;
    this.#current = 0;
    this.#bucketStart = now - (elapsed % BUCKET_IN_MS);
  }
}
