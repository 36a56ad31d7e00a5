// A rate in constant memory: events counted in two half-second buckets (a paced scope's sends and successes, sendRate.ts).

/** Events are counted in buckets this long; the rate is read over the current and the previous one. */
const METER_BUCKET_IN_MS = 500;
/** A rate read from fewer events than this, over less than a bucket, is noise: no cut on it yet. */
const MIN_EVENTS_TO_MEASURE = 8;

/** Counts events (sends, successes) in two half-second buckets: a rate in constant memory. */
export class RateMeter {
  #bucketStart: number;
  #current = 0;
  #previous = 0;
  readonly #since: number;

  /**
   * `earlier` events counted from `since` (at or before `now`) to `now`: read as the previous bucket,
   * their share of it when they spread over more than a bucket.
   */
  constructor(now: number, since = now, earlier = 0) {
    this.#bucketStart = now;
    this.#since = Math.min(since, now);
    this.#previous = now - this.#since > METER_BUCKET_IN_MS ? (earlier * METER_BUCKET_IN_MS) / (now - this.#since) : earlier;
  }

  /** Events over the last one to two buckets. */
  countAt(now: number): number {
    this.#roll(now);
    return this.#current + this.#previous;
  }

  count(now: number): void {
    this.#roll(now);
    this.#current += 1;
  }

  /** How long the count of {@link countAt} covers: one to two buckets, less while the meter is younger. */
  spanInMs(now: number): number {
    this.#roll(now);
    return Math.min(now - this.#since, now - this.#bucketStart + METER_BUCKET_IN_MS);
  }

  /** Events per second over the last one to two buckets; undefined while too little is known. */
  ratePerSecond(now: number): number | undefined {
    const spanInMs = this.spanInMs(now);
    const events = this.#current + this.#previous;
    if (events < MIN_EVENTS_TO_MEASURE && spanInMs < METER_BUCKET_IN_MS) return undefined;
    // Nothing lately (a late answer after a long timeout): no rate.
    if (events === 0) return undefined;
    return (events * 1000) / Math.max(spanInMs, 1);
  }

  #roll(now: number): void {
    const elapsed = now - this.#bucketStart;
    if (elapsed < METER_BUCKET_IN_MS) return;
    this.#previous = elapsed < 2 * METER_BUCKET_IN_MS ? this.#current : 0;
    this.#current = 0;
    this.#bucketStart = now - (elapsed % METER_BUCKET_IN_MS);
  }
}
