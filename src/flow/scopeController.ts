// One scope's send rate, learnt from its answers (docs/flow-control.md, "The model"). Pure: time is passed in.
import type { OutcomeClass } from "../classification/outcomeClass.js";
import { BUCKET_IN_MS, RateMeter } from "./rateMeter.js";

/** What an answer says of the scope that gave it (docs/flow-control.md, "Each kind of answer"); `failed` includes an attempt taken for lost. */
export type Evidence = "served" | "answered" | "throttled" | "failed";

/** What an attempt's outcome class says of the scope; undefined: nothing (aborted). */
export const EVIDENCE_OF: Readonly<Record<OutcomeClass, Evidence | undefined>> = {
  success: "served",
  permanent: "answered",
  throttled: "throttled",
  timeout: "throttled",
  transient: "failed",
  aborted: undefined,
};

/** What every controller of one breaker shares, resolved once. */
export interface ControllerSettings {
  /** How often a scope that serves nothing is probed: its rate while out. */
  readonly probeIntervalInMs: number;
  /** Unserved answers in a row (nothing served between) that make a scope out. */
  readonly unservedToOut: number;
  /** Whether throttles teach a rate (`pacing: false`: only out and back). */
  readonly pacing: boolean;
}

/** A change of the scope's state that its waiters must hear of: it went out (serves nothing), or came back. */
export type Turn = "out" | "back";

/** One scope's controller; a partition's account runs the same code. */
export class ScopeController {
  /** Attempts per second; `Infinity`: no limit. */
  #rate = Infinity;
  /** The capacity learnt at the last throttle while serving; `Infinity` while unknown. */
  #plateau = Infinity;
  #out = false;
  #servedAt: number;
  /** The last change of the rate: answers to attempts sent before it are no news. */
  #changedAt = -Infinity;
  /** Served answers to attempts sent at the rate held since the last change. */
  #held = 0;
  /** Unserved answers, and failures among them, since it last served. */
  #unserved = 0;
  #failures = 0;
  #fastestInMs: number;
  /** Served round trips, smoothed over about {@link EVIDENCE_ANSWERS}. */
  #smoothedInMs = 0;
  /** The last attempt's slot: the next goes `1 / rate` after it. */
  #lastSlotAt = -Infinity;
  #served: RateMeter;
  /** First attempts: what the scope's callers ask. */
  readonly #asked: RateMeter;
  /** The share unserved of about the last {@link EVIDENCE_ANSWERS} answers. */
  #unservedShare = 0;
  /** The partition and time of the last {@link EVIDENCE_ANSWERS} unserved answers (for an account: are they spread?). */
  readonly #recent: { from: string; at: number }[] = [];
  readonly #s: ControllerSettings;

  /** `fastestInMs`: a round trip already known (a partition takes its account's). */
  constructor(at: number, settings: ControllerSettings, fastestInMs = Infinity) {
    this.#s = settings;
    this.#servedAt = at;
    this.#fastestInMs = fastestInMs;
    this.#served = new RateMeter(at);
    this.#asked = new RateMeter(at);
  }

  get out(): boolean {
    return this.#out;
  }

  get ratePerSecond(): number {
    return this.#rate;
  }

  get servedAt(): number {
    return this.#servedAt;
  }

  get probeIntervalInMs(): number {
    return this.#s.probeIntervalInMs;
  }

  get fastestInMs(): number {
    return this.#fastestInMs;
  }

  /** What a served answer usually takes here (ms; 0 before the first). */
  get smoothedInMs(): number {
    return this.#smoothedInMs;
  }

  /** Trouble of its own now: out, limited, or unserved answers of its own since it last served. */
  get troubled(): boolean {
    return this.#out || this.#rate !== Infinity || this.#unserved > 0;
  }

  get unservedShare(): number {
    return this.#unservedShare;
  }

  /** Attempts that may be in flight: one round trip's worth at GAIN × the rate, at least one; no bound while out or unlimited. */
  window(): number {
    if (this.#out || this.#rate === Infinity || this.#fastestInMs === Infinity) return Infinity;
    return Math.max(1, (this.#rate * this.#fastestInMs * GAIN) / 1000);
  }

  /** When the next attempt may go: `at` or later, `Infinity` when `inFlight` fills the window (an answer frees it). */
  nextSendAt(at: number, inFlight: number): number {
    if (this.#rate === Infinity) return at;
    return inFlight >= this.window() ? Infinity : Math.max(at, this.#lastSlotAt + 1000 / this.#rate);
  }

  asked(at: number): void {
    this.#asked.count(at);
  }

  sent(at: number): void {
    this.#lastSlotAt = this.#rate === Infinity ? at : Math.max(at, this.#lastSlotAt + 1000 / this.#rate);
  }

  /** Every answer the scope gave, whoever's evidence it turns out to be (see `answer`): the share unserved, and who gave an unserved one. */
  observe(unserved: boolean, from: string, at: number): void {
    this.#unservedShare += ((unserved ? 1 : 0) - this.#unservedShare) / EVIDENCE_ANSWERS;
    if (!unserved) return;
    if (this.#recent.length === EVIDENCE_ANSWERS) this.#recent.shift();
    this.#recent.push({ from, at });
  }

  /** Partitions among its last unserved answers of the last second: are its failures spread? */
  spreadAt(at: number): number {
    return new Set(this.#lately(at).map(({ from }) => from)).size;
  }

  /** Its last unserved answers of the last second (at most {@link EVIDENCE_ANSWERS}). */
  unservedLately(at: number): number {
    return this.#lately(at).length;
  }

  #lately(at: number): { from: string; at: number }[] {
    return this.#recent.filter(({ at: seen }) => at - seen < 2 * BUCKET_IN_MS);
  }

  /**
   * The scope's evidence: an answer to an attempt sent at `sentAt`, observed first. `limited`: the
   * attempt waited for its turn, so the limit is what held it (it grows only then). Returns the turn taken.
   */
  answer(evidence: Evidence, sentAt: number, at: number, limited: boolean): Turn | undefined {
    return evidence === "served" || evidence === "answered" ? this.#replied(evidence, sentAt, at, limited) : this.#unservedAnswer(evidence, sentAt, at);
  }

  #replied(evidence: "served" | "answered", sentAt: number, at: number, limited: boolean): Turn | undefined {
    // Unknown when the attempt was sent before the scope was watched.
    const roundTripInMs = Number.isFinite(sentAt) ? Math.max(1, at - sentAt) : this.#fastestInMs;
    // Back: what it served before and while it was out is no measure of what it serves now.
    if (this.#out) this.#served = new RateMeter(at);
    if (evidence === "served") {
      this.#served.count(at);
      this.#servedAt = at;
      this.#unserved = 0;
      this.#failures = 0;
      if (roundTripInMs !== Infinity) {
        this.#fastestInMs = Math.min(this.#fastestInMs, roundTripInMs);
        this.#smoothedInMs = this.#smoothedInMs === 0 ? roundTripInMs : this.#smoothedInMs + (roundTripInMs - this.#smoothedInMs) / EVIDENCE_ANSWERS;
      }
    }
    if (this.#out) {
      // Back: one attempt per round trip (the probe's, or the fastest known when queues slowed it), doubling from there.
      this.#out = false;
      this.#change(at, Math.max(2000 / this.#s.probeIntervalInMs, 1000 / Math.min(roundTripInMs, this.#fastestInMs)));
      return "back";
    }
    if (evidence !== "served" || this.#rate === Infinity || sentAt < this.#changedAt) return undefined;
    if (!limited) {
      // Its limit held nothing back: a rate far past what its callers ask is no limit.
      if (this.#rate >= this.#asked.ratePerSecond(at) / DEMAND_SHARE) this.#rate = Infinity;
      return undefined;
    }
    this.#held += 1;
    // An answer slower than GAIN × the fastest (+ GAIN ms) found a queue at the server: the rate it holds is enough.
    const queued = roundTripInMs > GAIN * this.#fastestInMs + GAIN;
    const belowPlateau = this.#rate < this.#plateau;
    if (queued || this.#held < (belowPlateau ? 1 : HOLD_ANSWERS)) return undefined;
    this.#change(at, belowPlateau ? Math.min(2 * this.#rate, this.#plateau) : 2 * this.#rate);
    return undefined;
  }

  #unservedAnswer(evidence: "throttled" | "failed", sentAt: number, at: number): Turn | undefined {
    this.#unserved += 1;
    if (evidence === "failed") this.#failures += 1;
    const enough = this.#s.unservedToOut;
    if (this.#failures >= enough || (this.#unserved >= enough && at - this.#servedAt >= QUIET_IN_MS)) {
      if (this.#out) return undefined;
      this.#out = true;
      this.#plateau = Infinity;
      this.#change(at, 1000 / this.#s.probeIntervalInMs);
      // The first probe a probe interval after this failure, not after the last attempt sent.
      this.#lastSlotAt = at;
      return "out";
    }
    // docs/flow-control.md, "Each kind of answer", throttled: from its second throttle in a second, once per round, the rate drops
    // to what it served (a quarter second measured, a success since the last change), or else halves (a ramp cut short).
    if (evidence !== "throttled" || !this.#s.pacing || this.#out || sentAt < this.#changedAt || this.unservedLately(at) < 2) return undefined;
    const serving = this.#served.spanInMs(at) >= QUIET_IN_MS && this.#servedAt >= this.#changedAt;
    const served = serving ? this.#served.ratePerSecond(at) : this.#rate / 2;
    if (!(served > 0) || served === Infinity) return undefined;
    const floor = 1000 / this.#s.probeIntervalInMs;
    const rate = Math.max(floor, Math.min(this.#rate, Math.max(served, DEMAND_SHARE * this.#asked.ratePerSecond(at))));
    if (serving) this.#plateau = Math.max(floor, Math.min(served, rate));
    this.#change(at, rate);
    return undefined;
  }

  /** Its account went out: a limit learnt before is no measure of what it serves once the account is back. */
  forgetLimit(at: number): void {
    if (this.#out || this.#rate === Infinity) return;
    this.#plateau = Infinity;
    this.#change(at, Infinity);
  }

  #change(at: number, rate: number): void {
    this.#rate = rate;
    this.#changedAt = at;
    this.#held = 0;
  }
}

/** Whether a partition's unserved answer is its account's evidence: docs/flow-control.md, "The account's evidence". */
export function isAccountsEvidence(partition: ScopeController | undefined, account: ScopeController, at: number): boolean {
  if (partition === undefined || account.out) return true;
  if (account.spreadAt(at) < SPREAD || partition.unservedLately(at) < 2) return false;
  return account.ratePerSecond !== Infinity || partition.unservedShare <= Math.max(GAIN * account.unservedShare, 0.5);
}

/** Quiet, lost, and a capacity measured (docs/flow-control.md, "The constants"): a partition at capacity serves every few ms between throttles. */
export const QUIET_IN_MS = 250;

/** Past the plateau (its capacity learnt), served answers at the rate it holds before it doubles: a probe costs a throttle in about five. */
export const HOLD_ANSWERS = 4;

/** Never paced below this share of what the callers ask (a throttle serving a share whatever the rate is others' load), nor limited past it. */
export const DEMAND_SHARE = 1 / 4;

/** The window (rate × fastest × GAIN), the no-queue test (GAIN × fastest + GAIN ms), a partition's failures against its account's. */
export const GAIN = 2;

/** The answers the unserved share is taken over, and the unserved answers an account's spread is read from. */
export const EVIDENCE_ANSWERS = 8;

/** Partitions an account's unserved answers must come from before it acts on them: one hot key must not slow it. */
export const SPREAD = 3;
