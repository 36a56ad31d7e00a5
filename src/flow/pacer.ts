import { SendRate, type RateHistory, type SendRateSettings } from "./sendRate.js";

/**
 * Spaces one scope's attempts (first attempts and retries alike) at its learnt send rate:
 * each attempt reserves the next free slot, `1 / rate` after the previous one, at the rate the
 * scope will have *at that slot* (in slow start it doubles every eighth of a second, so a
 * queue made while the rate is low is not spread out at that low rate: a backlog of 600
 * behind a scope just back from an outage at 5/s is sent within about a second and a half,
 * not two minutes). A slot beyond the caller's remaining time is not reserved: the caller
 * is told at once how long the queue is, instead of waiting to its deadline for nothing.
 */
export class Pacer {
  readonly rate: SendRate;
  /** The next free send slot (ms, the gate's clock). */
  #nextSlotAt = -Infinity;

  /** `history`: what the scope sent and served before it was paced (see {@link RateHistory}). */
  constructor(now: number, settings: SendRateSettings, history?: RateHistory) {
    this.rate = new SendRate(now, settings, history);
  }

  /**
   * Reserves a slot: the delay until it (0 when unpaced or free now), or `{ refusedFor }`
   * with the wait the caller cannot afford.
   */
  reserve(now: number, remainingInMs: number): number | { refusedFor: number } {
    const slot = Math.max(now, this.#nextSlotAt);
    const rate = this.rate.rateAt(now, slot);
    if (rate === Infinity) {
      this.rate.sent(now);
      return 0;
    }
    const delayInMs = slot - now;
    if (delayInMs > remainingInMs) return { refusedFor: delayInMs };
    this.#nextSlotAt = slot + 1000 / rate;
    this.rate.sent(now);
    return delayInMs;
  }

  /** Milliseconds until the next free slot (0 when free now). */
  queueInMs(now: number): number {
    return Math.max(0, this.#nextSlotAt - now);
  }
}
