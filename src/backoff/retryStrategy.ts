import { describeValue } from "../validation/describeValue.js";

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

/**
 * A source of uniform random numbers in [0, 1]; injectable so tests can pin the jitter.
 * Options spell it out as `() => number`, one name less in the public API.
 */
export type RandomSource = () => number;

/**
 * Pins one draw into [0, 1]: below 0 reads as 0, above 1 as 1, and what is not a finite
 * number (NaN, Infinity, a string) as 0.5, the middle of the range. Pure.
 */
export function clampUnitRandom(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return 0.5;
  return value < 0 ? 0 : value > 1 ? 1 : value;
}

/**
 * Validates a `random` option once and returns a source whose every answer is in [0, 1],
 * whatever the user's function returns. Clamped where it enters, not at each use: a wait
 * computed from NaN or a negative draw becomes a 1 ms timer that polls (and outlives its
 * deadline). `undefined` and `Math.random` give `Math.random` itself.
 */
export function resolveRandomSource(name: string, random: unknown): RandomSource {
  if (random === undefined || random === Math.random) return Math.random;
  if (typeof random !== "function") {
    throw new TypeError(`${name} must be a function returning a number in [0, 1]; got ${describeValue(random)}.`);
  }
  const source = random as () => unknown;
  return () => clampUnitRandom(source());
}

/** A strategy answering `delay`'s waits; a retry number that is not a whole number >= 1 is a RangeError. */
export function strategyOf(kind: RetryStrategy["kind"], maxRetries: number, maxDelayInMs: number, delay: (retryNumber: number, previousDelayInMs: number) => number): RetryStrategy {
  return {
    kind,
    maxRetries,
    maxDelayInMs,
    delayInMs(retryNumber: number, previousDelayInMs = 0): number {
      if (!Number.isInteger(retryNumber) || retryNumber < 1) throw new RangeError(`retryNumber must be an integer >= 1; got ${retryNumber}.`);
      return delay(retryNumber, previousDelayInMs);
    },
  };
}

/**
 * Whose option a misspelt key is, as the caller wrote it: `retry (a fixed backoff)` for options
 * found at a path (the user wrote `retry`, and maybe no `strategy`: installResilience's preset is
 * an exponential backoff), the factory's own name for options it was called with.
 */
export function strategyOwnerAt(path: string, factory: string, backoff: string): string {
  return path === "" ? factory : `${path} (${backoff})`;
}
