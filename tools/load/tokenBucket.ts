/**
 * A token bucket per key: `capacity` tokens, refilled continuously at `ratePerSecond`.
 * Pure bookkeeping with an injected clock, so tests step time by hand.
 */
export class KeyedTokenBucket {
  readonly #ratePerSecond: number;
  readonly #capacity: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  /**
   * @param ratePerSecond - tokens added per second to each key's bucket.
   * @param capacity - most tokens a bucket holds (the burst it admits). Defaults to one second's worth.
   * @param now - monotonic milliseconds.
   */
  constructor(ratePerSecond: number, capacity: number = ratePerSecond, now: () => number = () => performance.now()) {
    if (!(ratePerSecond > 0)) throw new RangeError(`ratePerSecond must be positive; got ${ratePerSecond}.`);
    if (!(capacity > 0)) throw new RangeError(`capacity must be positive; got ${capacity}.`);
    this.#ratePerSecond = ratePerSecond;
    this.#capacity = capacity;
    this.#now = now;
  }

  /** Takes `tokens` from `key`'s bucket if it holds that many and returns true; otherwise takes none and returns false. */
  take(key: string, tokens = 1): boolean {
    const now = this.#now();
    const bucket = this.#buckets.get(key) ?? { tokens: this.#capacity, at: now };
    bucket.tokens = Math.min(this.#capacity, bucket.tokens + ((now - bucket.at) / 1000) * this.#ratePerSecond);
    bucket.at = now;
    this.#buckets.set(key, bucket);
    if (bucket.tokens < tokens) return false;
    bucket.tokens -= tokens;
    return true;
  }
}
