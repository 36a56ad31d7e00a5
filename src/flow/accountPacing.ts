import { WakeList } from "../timing/wake.js";
import { Pacer } from "./pacer.js";
import type { SendRateSettings } from "./sendRate.js";

/**
 * Pacing for a whole account, for the account-wide target (about 20,000 transactions/s):
 * when an account throttles as a whole, every partition answers 503, and pacing each
 * partition alone learns little where most are hit a few times (a storm over many keys).
 *
 * It engages only on evidence that the *account* is throttling, not a table growing: a
 * partition's first throttled answer is what Azure's splitting of a growing table looks
 * like (each new range is hot once, then served), and it is no evidence. In one second,
 * *repeated* throttled answers (from partitions already throttled within `forgetAfterInMs`)
 * from at least {@link SPREAD_SCOPES} different partitions, outnumbering the account's
 * successes. Until then it holds a second's counts and costs a lookup per answer; once
 * engaged, every attempt to the account also takes an account slot (the rate learnt as for
 * a partition: never below what the account serves), and it lets go after
 * `forgetAfterInMs` without a throttled answer.
 */
export class AccountPacing {
  #windowStart: number;
  #repeatScopes = new Set<string>();
  #repeats = 0;
  #successes = 0;
  #pacer: Pacer | undefined;
  #lastThrottleAt = -Infinity;
  /** The attempts waiting for this account's slots: woken at once when its queue is let out (the outage ended, or it was forgotten). */
  readonly waiters = new WakeList();
  readonly #settings: SendRateSettings & { forgetAfterInMs: number };

  constructor(now: number, settings: SendRateSettings & { forgetAfterInMs: number }) {
    this.#windowStart = now;
    this.#settings = settings;
  }

  /** The account's pacer while engaged. */
  get pacer(): Pacer | undefined {
    return this.#pacer;
  }

  /** The account's pacer while engaged and paced (it has cut its rate) and not yet forgotten at `now`. */
  pacedAt(now: number): Pacer | undefined {
    return this.#pacer?.rate.paced === true && !this.idle(now) ? this.#pacer : undefined;
  }

  /** Whether nothing is left to remember (the caller drops it). */
  idle(now: number): boolean {
    return now - this.#lastThrottleAt >= this.#settings.forgetAfterInMs;
  }

  /** An answer that proves the account serves. */
  served(now: number): void {
    this.#roll(now);
    this.#successes += 1;
    if (this.#pacer?.rate.served(now) === true) this.waiters.wakeAll();
  }

  /**
   * A throttled answer from `scope`, to an attempt whose account slot was reserved at
   * `reservedAt`; `repeat` when that partition had already answered throttled lately.
   */
  throttled(scope: string, repeat: boolean, reservedAt: number, now: number): void {
    this.#roll(now);
    this.#lastThrottleAt = now;
    if (repeat) {
      this.#repeats += 1;
      // Only whether there are SPREAD_SCOPES matters: a storm over a million keys adds no more.
      if (this.#repeatScopes.size < SPREAD_SCOPES) this.#repeatScopes.add(scope);
    }
    if (this.#pacer === undefined && this.#repeatScopes.size >= SPREAD_SCOPES && this.#repeats > this.#successes) {
      this.#pacer = new Pacer(now, this.#settings);
    }
    this.#pacer?.rate.throttled(reservedAt, now);
  }

  #roll(now: number): void {
    if (this.#pacer !== undefined && this.idle(now)) {
      this.#pacer = undefined;
      this.waiters.wakeAll();
    }
    if (now - this.#windowStart < WINDOW_IN_MS) return;
    this.#windowStart = now;
    this.#repeatScopes.clear();
    this.#repeats = 0;
    this.#successes = 0;
  }
}

/** Partitions throttled again in one window that make a throttled account, rather than a few hot keys. */
export const SPREAD_SCOPES = 3;
const WINDOW_IN_MS = 1_000;
