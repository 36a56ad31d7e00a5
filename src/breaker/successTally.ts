/**
 * Counts, per scope, the recent attempts that were not rebalancing failures, for scopes
 * that have no circuit. A healthy partition costs the breaker a counter increment instead
 * of an opossum `fire()` (which costs more than the rest of an attempt's bookkeeping);
 * when its first rebalancing failure comes, the new circuit is primed with this count, so
 * opossum's error percentage is taken over the whole window, as if it had been there all along.
 */
export interface SuccessTally {
  /** Counts one attempt for `key`. */
  record(key: string): void;
  /** Attempts counted for `key` over about the last window (a sliding-window estimate). */
  count(key: string): number;
  /** Forgets `key` (its circuit now counts for it). */
  forget(key: string): void;
  /** Forgets everything. */
  clear(): void;
}

/** Options of {@link createSuccessTally}. */
export interface SuccessTallyOptions {
  /** The breaker's rolling window. */
  windowInMs: number;
  /** Most keys counted per window; attempts for further keys are not counted (their circuits start from zero). */
  maxKeys: number;
  /** The clock. Defaults to `Date.now`. */
  now?: () => number;
}

/**
 * Creates a {@link SuccessTally}: two maps, the current window and the previous one, the
 * previous weighted by how much of it still overlaps the last `windowInMs` (the estimate
 * Cloudflare's rate limiter uses). Memory stays within two windows of at most `maxKeys`
 * keys; no timer (windows turn over when the tally is next used).
 */
export function createSuccessTally(options: SuccessTallyOptions): SuccessTally {
  const { windowInMs, maxKeys } = options;
  const now = options.now ?? Date.now;
  let current = new Map<string, number>();
  let previous = new Map<string, number>();
  let windowStart = now();

  /** Turns the windows over when the clock has moved past the current one; returns the clock. */
  const turnOver = (): number => {
    const t = now();
    const elapsed = t - windowStart;
    if (elapsed < windowInMs) return t;
    previous = elapsed < 2 * windowInMs ? current : new Map();
    current = new Map();
    windowStart = t - (elapsed % windowInMs);
    return t;
  };

  return {
    record(key) {
      turnOver();
      const counted = current.get(key);
      if (counted !== undefined) current.set(key, counted + 1);
      else if (current.size < maxKeys) current.set(key, 1);
    },
    count(key) {
      const t = turnOver();
      const overlap = Math.max(0, 1 - (t - windowStart) / windowInMs);
      return Math.round((previous.get(key) ?? 0) * overlap) + (current.get(key) ?? 0);
    },
    forget(key) {
      current.delete(key);
      previous.delete(key);
    },
    clear() {
      current = new Map();
      previous = new Map();
    },
  };
}
