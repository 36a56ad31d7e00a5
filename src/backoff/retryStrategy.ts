
/**
 * A pure answer to "how many retries, and how long before retry number N?".
 * Strategies never sleep; the retry policy does the waiting.
 */
export interface RetryStrategy {
  /** Which strategy this is (for logs and docs). */
  readonly kind: "none" | "fixed" | "exponential" | "decorrelated";
  /** How many retries after the first attempt (so at most `maxRetries + 1` attempts). */
  readonly maxRetries: number;
  /** The longest delay this strategy produces; also caps server `Retry-After` hints by default. */
  readonly maxDelayInMs: number;
  /**
   * The wait before retry number `retryNumber` (1 for the first retry), in milliseconds.
   * `previousDelayInMs` is this strategy's own answer for the operation's previous retry (0
   * before the first): the retry policy keeps it per operation, so a strategy whose next
   * wait grows from its last (decorrelated jitter) stays a pure function. Others ignore it.
   */
  delayInMs(retryNumber: number, previousDelayInMs?: number): number;
}

/** The backoff strategies this package ships. */
export type RetryStrategyKind = RetryStrategy["kind"];

/**
 * A source of uniform random numbers in [0, 1]; injectable so tests can pin the jitter.
 * Options spell it out as `() => number`, one name less in the public API.
 */
export type RandomSource = () => number;

/** Throws a RangeError unless `retryNumber` is a whole number >= 1. */
export function checkRetryNumber(retryNumber: number): void {
  if (!Number.isInteger(retryNumber) || retryNumber < 1) {
    throw new RangeError(`retryNumber must be an integer >= 1; got ${retryNumber}.`);
  }
}

/**
 * Whose option a misspelt key is, as the caller wrote it: `retry with strategy "fixed"` for
 * options found at a path (the user wrote `retry`, not `fixedBackoff`), the factory's own name
 * for options it was called with.
 */
export function strategyOwnerAt(path: string, factory: string, strategy: string): string {
  return path === "" ? factory : `${path} with strategy "${strategy}"`;
}
