import { RateMeter } from "./rateMeter.js";

/**
 * A paced scope's send rate, learnt from its answers (RFC 8312's CUBIC and TCP slow start,
 * read, not copied; the AWS SDK's adaptive retry mode is the nearest client-side relative).
 *
 * - **Floor: what it serves.** The rate is never below the rate at which the scope has just
 *   served successes: a hot partition serving 50/s is sent at least 50/s.
 * - **A cut** (a throttled answer, once per round): when the scope served a fair share of
 *   what it was sent ({@link MIN_SERVED_SHARE}), it is at its capacity: the rate drops to the
 *   rate it served, and that becomes the plateau (CUBIC's W_max) it probes past, slowly at
 *   first. When it served (almost) nothing, it is out or throttled as a whole: the rate drops
 *   to `decreaseFactor` × the rate sent, and nothing is learnt about its capacity.
 * - **An outage teaches nothing** (TCP's ssthresh keeps what loss *while delivering* taught, not
 *   what a dead link did): a throttle while the scope served nothing at all (a partition being
 *   moved, an account throttled as a whole) holds the rate at the cut while the outage lasts, and
 *   the first success after it lets the scope go at once: unpaced when no capacity is known, back
 *   at its plateau when one is. Its waiters and newcomers then go as fast as the scope answers;
 *   a capacity is learnt again only from throttles while it serves.
 * - **Slow start**: from the first success after a cut that found the scope serving a little
 *   (below {@link MIN_SERVED_SHARE}), the rate doubles every {@link DOUBLING_IN_MS} up to
 *   `decreaseFactor` × the plateau (all the way, when no plateau is known), then follows
 *   CUBIC's curve to the plateau; only near the rate where it last throttled is the climb careful.
 * - **Probing**: past the plateau, only CUBIC's convex curve (+1 % after a second, +8 % after
 *   two, +27 % after three, doubled after about 4.6 s): no doubling on a quiet spell, which a
 *   paced queue makes by itself (its slots were reserved at the old rate, so the quiet says
 *   nothing about a faster one). A limit that has moved (a split partition, a calmer account)
 *   is found along the curve. Above the plateau it runs at most {@link MAX_AHEAD_OF_SENT} ×
 *   the rate actually sent: a little-used scope does not grow on no evidence.
 *
 * Unlike the AWS SDK's adaptive mode (one controller per client; after a throttle, regrowth
 * only along the cubic curve from a floor of 0.5 requests/s, which its users meet as slow
 * recovery), one controller per scope, with a served-rate floor and slow start. Pure
 * arithmetic: `now` (ms) is passed in.
 */
export class SendRate {
  #paced = false;
  /** When the last cut happened; `-Infinity` before the first. */
  #cutAt = -Infinity;
  /** The rate right after the last cut. */
  #startRate = 0;
  /** The capacity learnt (attempts/s): the rate served at the last cut that found the scope at capacity; Infinity while unknown. */
  #plateau = Infinity;
  /** The plateau before the last cut: undone when that cut turns out to have been an outage's first answer. */
  #plateauBefore = Infinity;
  /** The last cut came on a lone throttle (at most one attempt unserved in its window): it may have been an outage's first answer. */
  #cutOnLoneThrottle = false;
  /** True when the last cut found the scope at capacity (CUBIC from the plateau at once); false: slow start first. */
  #atCapacity = false;
  /** The first success after the last cut (slow start runs from it); undefined until then. */
  #growFrom: number | undefined;
  /** The last cut found the scope serving nothing (an outage): its first success ends it ({@link served}). */
  #outage = false;
  /** When the scope last served, as far as this controller knows. */
  #lastServedAt: number;
  readonly #sends: RateMeter;
  readonly #successes: RateMeter;
  readonly #settings: SendRateSettings;

  /** `history`: what the scope sent and served before this controller was made (see {@link RateHistory}). */
  constructor(now: number, settings: SendRateSettings, history?: RateHistory) {
    this.#settings = settings;
    this.#sends = new RateMeter(now, history?.since, history?.sent);
    this.#successes = new RateMeter(now, history?.since, history?.served);
    // Unknown: not since `since` when nothing was served from then (the last success was before it), else now.
    this.#lastServedAt = history?.lastServedAt ?? (history !== undefined && history.served === 0 ? history.since : now);
  }

  /** True once a throttle has cut the rate (before that, attempts go out unpaced while the send rate is measured). */
  get paced(): boolean {
    return this.#paced;
  }

  /** When the last cut happened (ms), `-Infinity` before the first. */
  get cutAt(): number {
    return this.#cutAt;
  }

  /** The capacity learnt at the last cut that found the scope at capacity (attempts/s); Infinity while unknown. */
  get plateau(): number {
    return this.#plateau;
  }

  /**
   * The allowed rate, attempts/s (`Infinity` before the first cut): at `at` (default `now`; a
   * pacer asks for a later slot's time), from what was measured up to `now`. `backlogged`: the
   * scope's pacer has a queue, so it sends all it is allowed, which is evidence enough to probe
   * past the plateau when it sends too few attempts for the meter to read a rate.
   */
  rateAt(now: number, at = now, backlogged = false): number {
    if (!this.#paced) return Infinity;
    const served = this.#successes.ratePerSecond(now) ?? 0;
    let curve = this.#curveAt(Math.max(at, now));
    // A later slot gets the slow start's projection, never a probe past the plateau (that waits for evidence).
    if (at > now && curve > this.#plateau) curve = Math.max(this.#plateau, this.#curveAt(now));
    if (curve > this.#plateau) {
      const sent = this.#sends.ratePerSecond(now) ?? (backlogged ? Infinity : 0);
      curve = Math.min(curve, Math.max(this.#plateau, MAX_AHEAD_OF_SENT * sent));
    }
    return Math.max(this.#settings.minRatePerSecond, served, curve);
  }

  /** An attempt was sent (or given its slot) at `now`. */
  sent(now: number): void {
    this.#sends.count(now);
  }

  /**
   * An answer that proves the scope serves (any answer but a throttle, an outage failure or an
   * abort) came at `now`. Returns true when it ended an outage: the rate is let go (unpaced, or
   * back at the plateau), so a queue spaced at the outage's rate should be asked about again.
   */
  served(now: number): boolean {
    this.#successes.count(now);
    this.#lastServedAt = now;
    if (!this.#paced || this.#growFrom !== undefined || now < this.#cutAt) return false;
    this.#growFrom = now;
    if (!this.#outage) return false;
    this.#outage = false;
    // Answers to attempts sent before this moment were sent into the outage: they cut nothing now.
    this.#cutAt = now;
    if (this.#plateau === Infinity) this.#paced = false;
    else {
      this.#atCapacity = true;
      this.#startRate = this.#plateau;
    }
    return true;
  }

  /**
   * A throttled answer to an attempt sent at `sentAt`. Cuts the rate once per round: answers
   * to attempts sent before the last cut were already accounted for by it. Returns true when it cut.
   */
  throttled(sentAt: number, now: number): boolean {
    if (sentAt < this.#cutAt || now - this.#cutAt < MIN_CUT_INTERVAL_IN_MS) return false;
    const measured = this.#sends.ratePerSecond(now);
    if (measured === undefined) return false;
    const { decreaseFactor, minRatePerSecond } = this.#settings;
    const allowed = this.rateAt(now);
    // The rate sent, as measured, but never above the rate allowed (slots reserved in a burst read high).
    const sentRate = Math.min(measured, allowed);
    // The share served, from counts over the same window (a rate read from a few successes is noise; a share is not).
    const share = this.#successes.countAt(now) / Math.max(1, this.#sends.countAt(now));
    const served = this.#successes.ratePerSecond(now) ?? share * sentRate;
    // Nothing served for a while, not just a burst of throttles between two successes (a partition's pacer
    // made at its second throttle counts only from its first: a hot partition's two may come in the same moment).
    // Or no success for twice that: the meter's window also holds what was served before the outage began, and a
    // caller making one call at a time, backing off through a partition busy for a second, read as a capacity the
    // rate it sent while it backed off; busy every few seconds, its rate was cut to 1-3/s and stayed there.
    this.#outage =
      (this.#successes.countAt(now) === 0 && this.#successes.spanInMs(now) >= OUTAGE_EVIDENCE_IN_MS) || now - this.#lastServedAt >= 2 * OUTAGE_EVIDENCE_IN_MS;
    // The last cut came on a lone throttle after successes, and nothing was served since: it was this outage's
    // first answer (a partition turning busy under a caller that sends one call at a time), not a capacity.
    if (this.#outage && this.#atCapacity && this.#cutOnLoneThrottle && this.#lastServedAt <= this.#cutAt) this.#plateau = this.#plateauBefore;
    this.#atCapacity = !this.#outage && share >= MIN_SERVED_SHARE;
    this.#plateauBefore = this.#plateau;
    this.#cutOnLoneThrottle = this.#sends.countAt(now) - this.#successes.countAt(now) <= 1;
    if (this.#atCapacity) {
      this.#plateau = Math.max(minRatePerSecond, Math.min(served, sentRate));
      this.#startRate = this.#plateau;
    } else {
      // A window that was partly idle reads low: one cut keeps at least half of what was allowed,
      // unless that was a slow start's projection rather than a rate the scope took.
      const keep = allowed === Infinity || !this.#inCubic(allowed) ? 0 : allowed * MAX_ONE_CUT;
      this.#startRate = Math.max(minRatePerSecond, served, decreaseFactor * sentRate, keep);
    }
    this.#paced = true;
    this.#cutAt = now;
    this.#growFrom = undefined;
    return true;
  }

  /** Whether `rate` is at or past the point where slow start hands over to CUBIC. */
  #inCubic(rate: number): boolean {
    return this.#atCapacity || rate >= this.#settings.decreaseFactor * this.#plateau;
  }

  /** The curve's rate at `at`, before the floor and the clamp. */
  #curveAt(at: number): number {
    const w = this.#plateau;
    if (this.#outage) return this.#startRate;
    if (this.#atCapacity) return this.#probe(this.#cutAt, at);
    if (this.#growFrom === undefined || at <= this.#growFrom) return this.#startRate;
    const threshold = w === Infinity ? Infinity : this.#settings.decreaseFactor * w;
    const doublings = (at - this.#growFrom) / DOUBLING_IN_MS;
    const grown = this.#startRate * 2 ** Math.min(doublings, MAX_DOUBLINGS);
    if (grown < threshold) return grown;
    if (w === Infinity) return grown;
    // Past the hand-over: CUBIC from decreaseFactor x plateau, reaching the plateau K seconds later.
    const handOverAt = this.#startRate >= threshold ? this.#growFrom : this.#growFrom + DOUBLING_IN_MS * Math.log2(threshold / this.#startRate);
    const k = Math.cbrt((w - Math.min(threshold, w)) / CUBIC_SCALE);
    const t = (at - handOverAt) / 1000 - k;
    return t <= 0 ? CUBIC_SCALE * t * t * t + w : this.#probe(handOverAt + k * 1000, at);
  }

  /**
   * Past the plateau since `from`: a convex cubic, relative to the plateau rather than CUBIC's
   * absolute C: eight clients sharing a partition each learn an eighth of it, and with C each
   * would probe as hard as one alone.
   */
  #probe(from: number, at: number): number {
    const w = this.#plateau;
    const t = Math.min(at - from, MAX_PROBE_IN_MS) / 1000;
    return w * (1 + PROBE_GAIN * t * t * t);
  }
}

/**
 * What a scope sent and served from `since` until its controller was made: a partition gets
 * its pacer only at its second throttle, and without this its first cut would wait for a
 * new half second of sends, by which time a partition serving nothing has been sent as much
 * again. The counts read as the meters' previous bucket (they go out of the rate in half a second).
 */
export interface RateHistory {
  readonly since: number;
  readonly sent: number;
  readonly served: number;
  /** When it last served, if it did. */
  readonly lastServedAt?: number;
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

/**
 * A scope that served at least this share of what it was sent, while throttling, is at its
 * capacity (a hot partition at 2x its target serves about half); below it, it is out or
 * throttled as a whole, and what it served says nothing about what it can serve.
 */
export const MIN_SERVED_SHARE = 0.2;

/** Slow start: the rate doubles this often while answers succeed (from 1/s to 256/s in one second). */
export const DOUBLING_IN_MS = 125;

/** The probe's clock stops here (w × 2,161): past it the 2x-of-sent clamp decides, and the arithmetic stays finite. */
const MAX_PROBE_IN_MS = 60_000;

/** A bound on the doublings counted (2^40 is beyond any rate), so that a long calm never makes Infinity. */
const MAX_DOUBLINGS = 40;

/** The probe's growth: w × (1 + PROBE_GAIN × t³), +1 % after one second, +8 % after two. */
const PROBE_GAIN = 0.01;

/** The most of the allowed rate one cut keeps at the least, outside slow start (with β = 0.7: a cut to at least 0.35 ×). */
const MAX_ONE_CUT = 0.5;

/** How far past the plateau the allowed rate may run ahead of the rate actually sent (the AWS SDK's factor). */
const MAX_AHEAD_OF_SENT = 2;

/** RFC 8312's C, as the AWS SDK uses it: from decreaseFactor x W, the plateau W is reached K = cbrt(W × (1 − β) / C) s later. */
const CUBIC_SCALE = 0.4;

/**
 * A cut is an outage's when nothing was served over at least this long before it: the quarter
 * second a circuit also asks of a partition before it opens (breaker/circuit.ts, QUIET_IN_MS).
 */
const OUTAGE_EVIDENCE_IN_MS = 250;
