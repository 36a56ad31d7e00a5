/**
 * A partition's sustainable send rate, learnt from its answers the way TCP CUBIC and the
 * AWS SDK's adaptive retry mode learn a link's (RFC 8312; read, not copied): on a throttled
 * answer the rate drops to `decreaseFactor` × the rate actually sent; then it grows back
 * along a cubic curve, fast at first, flat near the rate of the last throttle, and past it
 * slowly, probing for more. Unlike the AWS SDK, one controller per partition scope, so one
 * hot key never slows the others. Pure arithmetic: `now` (ms) is passed in.
 */
export class SendRate {
  /** Rate at the last cut (attempts/s), the curve's plateau. */
  #plateau = Infinity;
  /** When the last cut happened; `-Infinity` before the first. */
  #cutAt = -Infinity;
  /** Seconds from a cut to the plateau. */
  #k = 0;
  readonly #meter: SendMeter;
  readonly #settings: SendRateSettings;

  constructor(now: number, settings: SendRateSettings) {
    this.#settings = settings;
    this.#meter = new SendMeter(now);
  }

  /** True once a throttle has cut the rate (before that, attempts go out unpaced while the send rate is measured). */
  get paced(): boolean {
    return this.#cutAt !== -Infinity;
  }

  /** When the last cut happened (ms), `-Infinity` before the first. */
  get cutAt(): number {
    return this.#cutAt;
  }

  /** The allowed rate at `now`, attempts/s (`Infinity` before the first cut). */
  rateAt(now: number): number {
    if (!this.paced) return Infinity;
    const t = (now - this.#cutAt) / 1000 - this.#k;
    const cubic = CUBIC_SCALE * t * t * t + this.#plateau;
    // Past the plateau the curve probes for more, but only as far as the partition is used: at
    // most MAX_AHEAD_OF_SENT × the rate sent lately, as the AWS SDK's adaptive mode clamps its
    // rate to twice the measured one. Unclamped, a paced scope with little demand grows without
    // evidence, and a burst then meets that rate.
    const probing = cubic <= this.#plateau ? cubic : Math.min(cubic, Math.max(this.#plateau, MAX_AHEAD_OF_SENT * (this.#meter.ratePerSecond(now) ?? 0)));
    return Math.max(this.#settings.minRatePerSecond, probing);
  }

  /** An attempt was sent at `now`. */
  sent(now: number): void {
    this.#meter.count(now);
  }

  /**
   * A throttled answer to an attempt sent at `sentAt`. Cuts the rate once per round: answers
   * to attempts sent before the last cut were already accounted for by it. Returns true when it cut.
   */
  throttled(sentAt: number, now: number): boolean {
    if (sentAt < this.#cutAt || now - this.#cutAt < MIN_CUT_INTERVAL_IN_MS) return false;
    const measured = this.#meter.ratePerSecond(now);
    if (measured === undefined) return false;
    const { decreaseFactor, minRatePerSecond } = this.#settings;
    // The rate sent, as measured; but a window that was partly idle reads low, so one cut
    // never takes more than half of the rate allowed (before the first cut, nothing bounds it).
    const allowed = this.rateAt(now);
    this.#plateau = Math.max(minRatePerSecond, Math.min(measured, allowed), allowed === Infinity ? 0 : allowed * MAX_ONE_CUT);
    this.#cutAt = now;
    this.#k = Math.cbrt((this.#plateau * (1 - decreaseFactor)) / CUBIC_SCALE);
    return true;
  }
}

/** The rate controller's settings (see `PacingOptions`). */
export interface SendRateSettings {
  decreaseFactor: number;
  minRatePerSecond: number;
}

/**
 * At most one cut per this long. A busy event loop fires paced sends late and in bunches; a
 * token-bucket server answers a bunch with throttles whatever the average rate, and cut
 * after cut took a hot partition from 50/s to 6/s on a loaded two-core machine (the
 * integration test beside another suite). Half a second is a few round trips to Azure.
 */
const MIN_CUT_INTERVAL_IN_MS = 500;

/** The most of the allowed rate one cut keeps at the least (with β = 0.7: a cut to at least 0.35 ×). */
const MAX_ONE_CUT = 0.5;

/** How far past the plateau the allowed rate may run ahead of the rate actually sent (the AWS SDK's factor). */
const MAX_AHEAD_OF_SENT = 2;

/** RFC 8312's C, as the AWS SDK uses it: the plateau is reached K = cbrt(W × (1 − β) / C) s after a cut. */
const CUBIC_SCALE = 0.4;

/** Sends are counted in buckets this long; the rate is read over the current and the previous one. */
const METER_BUCKET_IN_MS = 500;
/** A rate read from fewer sends than this, over less than a bucket, is noise: no cut on it yet. */
const MIN_SENDS_TO_MEASURE = 8;

/** Counts sends in two half-second buckets: the measured send rate, in constant memory. */
class SendMeter {
  #bucketStart: number;
  #current = 0;
  #previous = 0;
  readonly #since: number;

  constructor(now: number) {
    this.#bucketStart = now;
    this.#since = now;
  }

  count(now: number): void {
    this.#roll(now);
    this.#current += 1;
  }

  /** Sends per second over the last one to two buckets; undefined while too little is known. */
  ratePerSecond(now: number): number | undefined {
    this.#roll(now);
    const sends = this.#current + this.#previous;
    const spanInMs = Math.min(now - this.#since, now - this.#bucketStart + METER_BUCKET_IN_MS);
    if (sends < MIN_SENDS_TO_MEASURE && spanInMs < METER_BUCKET_IN_MS) return undefined;
    // Nothing sent lately (a late answer after a long timeout): no rate to cut from.
    if (sends === 0) return undefined;
    return (sends * 1000) / Math.max(spanInMs, 1);
  }

  #roll(now: number): void {
    const elapsed = now - this.#bucketStart;
    if (elapsed < METER_BUCKET_IN_MS) return;
    this.#previous = elapsed < 2 * METER_BUCKET_IN_MS ? this.#current : 0;
    this.#current = 0;
    this.#bucketStart = now - (elapsed % METER_BUCKET_IN_MS);
  }
}
