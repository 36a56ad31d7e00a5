import { Pacer } from "./pacer.js";
import type { SendRateSettings } from "./sendRate.js";

/**
 * Pacing for a whole account, for the account-wide target (about 20,000 transactions/s):
 * when an account throttles as a whole, every partition answers 503, and pacing each
 * partition alone learns nothing where most are hit once (a storm over many keys).
 *
 * It engages only on evidence that the *account* is the bottleneck, not a few hot keys: in
 * one second, throttled answers from at least {@link SPREAD_SCOPES} different partitions,
 * outnumbering the account's successes. Until then it holds a second's counts and costs a
 * lookup per answer; once engaged, every attempt to the account also takes an account slot
 * (the rate learnt as for a partition), and it lets go after `forgetAfterInMs` without a
 * throttled answer.
 */
export class AccountPacing {
  #windowStart: number;
  #throttledScopes = new Set<string>();
  #throttles = 0;
  #successes = 0;
  #pacer: Pacer | undefined;
  #lastThrottleAt = -Infinity;
  readonly #settings: SendRateSettings & { forgetAfterInMs: number };

  constructor(now: number, settings: SendRateSettings & { forgetAfterInMs: number }) {
    this.#windowStart = now;
    this.#settings = settings;
  }

  /** The account's pacer while engaged. */
  get pacer(): Pacer | undefined {
    return this.#pacer;
  }

  /** Whether nothing is left to remember (the caller drops it). */
  idle(now: number): boolean {
    return now - this.#lastThrottleAt >= this.#settings.forgetAfterInMs;
  }

  /** An answer that proves the account serves. */
  served(now: number): void {
    this.#roll(now);
    this.#successes += 1;
  }

  /** A throttled answer from `scope`, to an attempt whose account slot was reserved at `reservedAt`. */
  throttled(scope: string, reservedAt: number, now: number): void {
    this.#roll(now);
    this.#lastThrottleAt = now;
    this.#throttles += 1;
    // Only whether there are SPREAD_SCOPES matters: a storm over a million keys adds no more.
    if (this.#throttledScopes.size < SPREAD_SCOPES) this.#throttledScopes.add(scope);
    if (this.#pacer === undefined && this.#throttledScopes.size >= SPREAD_SCOPES && this.#throttles > this.#successes) {
      this.#pacer = new Pacer(now, this.#settings);
    }
    this.#pacer?.rate.throttled(reservedAt, now);
  }

  #roll(now: number): void {
    if (this.#pacer !== undefined && this.idle(now)) this.#pacer = undefined;
    if (now - this.#windowStart < WINDOW_IN_MS) return;
    this.#windowStart = now;
    this.#throttledScopes.clear();
    this.#throttles = 0;
    this.#successes = 0;
  }
}

/** Throttled partitions in one window that make a throttled account, rather than hot keys. */
export const SPREAD_SCOPES = 3;
const WINDOW_IN_MS = 1_000;
