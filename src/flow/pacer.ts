import { SendRate, type SendRateSettings } from "./sendRate.js";

/**
 * Spaces one partition scope's attempts (first attempts and retries alike) at its learnt
 * send rate: each attempt reserves the next free slot, `1 / rate` after the previous one.
 * A slot beyond the caller's remaining time is not reserved: the caller is told at once how
 * long the queue is, instead of waiting to its deadline for nothing.
 */
export class Pacer {
  readonly rate: SendRate;
  /** The next free send slot (ms, the gate's clock). */
  #nextSlotAt = -Infinity;

  constructor(now: number, settings: SendRateSettings) {
    this.rate = new SendRate(now, settings);
  }

  /**
   * Reserves a slot: the delay until it (0 when unpaced or free now), or `{ refusedFor }`
   * with the wait the caller cannot afford.
   */
  reserve(now: number, remainingInMs: number): number | { refusedFor: number } {
    const rate = this.rate.rateAt(now);
    if (rate === Infinity) {
      this.rate.sent(now);
      return 0;
    }
    const slot = Math.max(now, this.#nextSlotAt);
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
