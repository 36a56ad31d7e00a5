import { SendRate, type RateHistory, type SendRateSettings } from "./sendRate.js";

/**
 * How long a paced attempt waits before it asks again whether its slot has come sooner (the
 * scope's rate grew since it was reserved): a queue made at a low rate is let out at the rate
 * the scope reaches, half a second late at most, instead of at the rate it was made at.
 */
export const PACED_RECHECK_IN_MS = 500;

/** The rate must grow by this factor over the one the queue was spaced at before the queue is squeezed. */
const SQUEEZE_AT_GROWTH = 1.5;

/** Where a reserved slot stands in its pacer's queue (see {@link Pacer.delayOf}). */
export interface PacedSlot {
  readonly position: number;
  readonly generation: number;
}

/**
 * Spaces one scope's attempts (first attempts and retries alike) at its learnt send rate:
 * each attempt reserves the next free slot, `1 / rate` after the previous one, at the rate the
 * scope will have *at that slot* (in slow start it doubles every eighth of a second, so a
 * queue made while the rate is low is not spread out at that low rate: a backlog of 600
 * behind a scope just back from an outage at 5/s is sent within about a second and a half,
 * not two minutes). A slot beyond the caller's remaining time is not reserved: the caller
 * is told at once how long the queue is, instead of waiting to its deadline for nothing.
 *
 * When the rate grows past the one the queue was spaced at (past the plateau it grows along
 * CUBIC's curve, which a queue reserved at once cannot foresee), the queue still ahead is
 * squeezed: every slot moves earlier in proportion, in order. Slots are kept as positions on
 * a line that maps to time (`time = scale * position + shift`); a squeeze maps the line anew,
 * so it touches no slot, and a waiter reads its slot's time at its next ask ({@link delayOf}).
 */
export class Pacer {
  readonly rate: SendRate;
  /** The next free send slot (ms, the gate's clock). */
  #nextSlotAt = -Infinity;
  /** The rate the queue ahead was spaced at (the last slot's). */
  #spacedAt = Infinity;
  #scale = 1;
  #shift = 0;
  /** A new line begins when the queue has emptied: a slot of an older one has come. */
  #generation = 0;
  #lastSlot: PacedSlot | undefined;

  /**
   * `history`: what the scope sent and served before it was paced (see {@link RateHistory}).
   * Every waiter on a slot must read it again ({@link delayOf}) before it sends: a squeezed queue
   * would otherwise book newcomers over a waiter that kept the delay it was first given.
   */
  constructor(now: number, settings: SendRateSettings, history?: RateHistory) {
    this.rate = new SendRate(now, settings, history);
  }

  /**
   * Reserves a slot: the delay until it (0 when unpaced or free now), or `{ refusedFor }`
   * with the wait the caller cannot afford. A delayed slot's place is {@link lastSlot}.
   */
  reserve(now: number, remainingInMs: number): number | { refusedFor: number } {
    this.#squeeze(now);
    const slot = Math.max(now, this.#nextSlotAt);
    const rate = this.rate.rateAt(now, slot, slot > now);
    if (rate === Infinity) {
      this.rate.sent(now);
      return 0;
    }
    const delayInMs = slot - now;
    if (delayInMs > remainingInMs) return { refusedFor: delayInMs };
    this.#nextSlotAt = slot + 1000 / rate;
    this.#spacedAt = rate;
    this.rate.sent(now);
    if (delayInMs > 0) this.#lastSlot = { position: (slot - this.#shift) / this.#scale, generation: this.#generation };
    return delayInMs;
  }

  /** The place of the slot the last delayed {@link reserve} gave. */
  get lastSlot(): PacedSlot | undefined {
    return this.#lastSlot;
  }

  /** Milliseconds until `slot` comes (0 when it has), the queue squeezed first if the rate has grown. */
  delayOf(slot: PacedSlot, now: number): number {
    this.#squeeze(now);
    if (slot.generation !== this.#generation) return 0;
    return Math.max(0, this.#scale * slot.position + this.#shift - now);
  }

  /** Milliseconds until the next free slot (0 when free now). */
  queueInMs(now: number): number {
    return Math.max(0, this.#nextSlotAt - now);
  }

  #squeeze(now: number): void {
    const ahead = this.#nextSlotAt - now;
    if (ahead <= 0) {
      // The queue is empty: a new line, so that squeezes never pile up into a scale too small to read.
      if (this.#scale !== 1) {
        this.#scale = 1;
        this.#shift = 0;
        this.#generation += 1;
      }
      return;
    }
    const rate = this.rate.rateAt(now, now, true);
    if (!(rate > SQUEEZE_AT_GROWTH * this.#spacedAt)) return;
    if (rate === Infinity) {
      // Not paced any more: every slot has come.
      this.#nextSlotAt = now;
      this.#scale = 1;
      this.#shift = 0;
      this.#generation += 1;
      return;
    }
    const factor = this.#spacedAt / rate;
    this.#scale *= factor;
    this.#shift = now + (this.#shift - now) * factor;
    this.#nextSlotAt = now + ahead * factor;
    this.#spacedAt = rate;
  }
}
