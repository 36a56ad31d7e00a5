// One partition scope that had trouble, and the one owner of what the breaker keeps for it.
import type { StorageService } from "../address/partitionScope.js";
import { logger } from "../logging/logger.js";
import { Pacer, type PacedSlot } from "../flow/pacer.js";
import type { ResolvedPacingOptions } from "../flow/pacingOptions.js";
import { WakeList } from "../timing/wake.js";
import { Circuit, type AnswerContext, type CircuitChange, type CircuitConfig } from "./circuit.js";
import type { CircuitState } from "./circuitStateSource.js";
import { HEALTHY_PARTITION, type PartitionStatus } from "./partitionStatus.js";

/** What every scope of one breaker shares, resolved once. */
export interface ScopeSettings {
  readonly circuit: CircuitConfig;
  /** Pacing, or undefined when it is off. */
  readonly pacing: ResolvedPacingOptions | undefined;
  /** A closed circuit with no failure for this long has nothing left to remember. */
  readonly rollingWindowInMs: number;
}

/** What an attempt's answer was, as the scope learns from it. */
export type Evidence = "served" | "failed" | "none";

/**
 * A scope with trouble in its recent past: its circuit, its pacer (made at its second throttled
 * answer, let go when it is forgotten, back from an outage, or released by its account), the
 * counts before its pacer, the account whose throttle holds its circuit open, and the operations
 * waiting on it. Every change to them is made by a method here, where the change happens; the
 * queries (`stateAt`, `status`, `pacedRate`, `isRetirable`) change nothing.
 */
export class TroubledScope {
  readonly key: string;
  readonly service: StorageService;
  /** The circuit's state as the log and listeners were last told it (written by the announcer only). */
  announced: CircuitState = "closed";
  readonly #circuit: Circuit;
  readonly #settings: ScopeSettings;
  #pacer: Pacer | undefined;
  #lastFailureAt: number;
  #lastThrottleAt = -Infinity;
  /**
   * From a first throttle until the pacer comes: when it came, and the attempts admitted and
   * answers served since. The pacer starts from them, as if it had been made at the first.
   */
  #unpaced: { since: number; sent: number; served: number; lastServedAt?: number } | undefined;
  /** The account (`service|account`) whose throttle as a whole opened this circuit: its next success closes it. */
  #heldBy: string | undefined;
  #waiters: WakeList | undefined;

  constructor(key: string, service: StorageService, at: number, settings: ScopeSettings) {
    this.key = key;
    this.service = service;
    this.#settings = settings;
    this.#circuit = new Circuit(at, settings.circuit);
    this.#lastFailureAt = at;
  }

  /** The pacer while the scope is paced or measuring (undefined when none, or forgotten at `at`). */
  pacerAt(at: number): Pacer | undefined {
    return this.#pacer !== undefined && !this.#forgotten(at) ? this.#pacer : undefined;
  }

  /** When the scope last answered throttled (`-Infinity` for never). */
  get lastThrottleAt(): number {
    return this.#lastThrottleAt;
  }

  /** The account whose throttle holds this circuit open, if any. */
  get heldBy(): string | undefined {
    return this.#heldBy;
  }

  /** The operations waiting on this scope (its circuit, its paced slots, a backoff after a failure here). */
  get waiters(): WakeList {
    return (this.#waiters ??= new WakeList());
  }

  stateAt(at: number): CircuitState {
    return this.#circuit.stateAt(at);
  }

  /** Whether an attempt asked now would be refused by the circuit (changes nothing). */
  refuses(at: number): boolean {
    return this.#circuit.refuses(at);
  }

  /** When a refused attempt may ask again. */
  retryAfterInMs(at: number): number {
    return this.#circuit.retryAfterInMs(at);
  }

  /** Whether the probe admitted at `probeAt` is still the one out. */
  holdsProbe(probeAt: number): boolean {
    return this.#circuit.holdsProbe(probeAt);
  }

  /**
   * Lets an attempt past the circuit, or not. Calm for `forgetAfterInMs`, the pacer goes first
   * (its waiters are woken: their slots say nothing any more). Admitted half-open, the attempt is
   * the probe.
   */
  admit(at: number): boolean {
    if (this.#pacer !== undefined && this.#forgotten(at)) this.#dropPacer();
    return this.#circuit.admit(at);
  }

  /** Gives back a probe admitted at `probeAt` but not sent. */
  returnProbe(at: number, probeAt: number): void {
    this.#circuit.returnProbe(at, probeAt);
  }

  /**
   * A paced slot for an attempt admitted now (a probe never queues: its partition's queue was made
   * before the circuit opened, and behind it the probe would hold the circuit half-open for the
   * queue's length): its delay, 0 when unpaced, or `{ refusedFor }` past `remainingInMs`.
   */
  reserve(at: number, remainingInMs: number, probe: boolean): number | { refusedFor: number } {
    const slot = this.#pacer === undefined || probe ? 0 : this.#pacer.reserve(at, remainingInMs);
    if (typeof slot === "number" && this.#unpaced !== undefined) this.#unpaced.sent += 1;
    return slot;
  }

  /** Milliseconds until `slot` of `pacer` comes; 0 once that pacer is no longer this scope's (replaced, let go). */
  delayOf(pacer: Pacer, slot: PacedSlot, at: number): number {
    return this.#pacer === pacer ? pacer.delayOf(slot, at) : 0;
  }

  /**
   * Learns from an attempt's answer: the circuit counts it (with what `answer` says of it), the
   * pacer's floor and slow start take a success, and a throttled answer
   * (`throttled`, to an attempt reserved at `reservedAt`) may make the pacer or cut it. Waiters
   * are woken when the circuit changes (closed: the partition is back; opened: the circuit now
   * says when it is tried again) or the queue is let out. Returns the circuit's change.
   */
  record(at: number, evidence: Evidence, throttled: boolean, reservedAt: number, answer: AnswerContext): CircuitChange | undefined {
    const before = this.#circuit.stateAt(at);
    const change = this.#circuit.record(evidence, at, answer);
    if (change?.to === "closed") this.#heldBy = undefined;
    // Back from serving nothing (a move): what the pacer learnt about it then says nothing about now.
    if (change?.from === "half_open" && change.to === "closed") this.#pacer = undefined;
    const served = evidence === "served";
    // The served rate is the pacer's floor, and its successes drive the slow start; the first after an outage lets the queue go.
    const letOut = served && this.#pacer !== undefined && this.#pacer.rate.served(at);
    if (served && this.#pacer === undefined && this.#unpaced !== undefined) {
      this.#unpaced.served += 1;
      this.#unpaced.lastServedAt = at;
    }
    if (change !== undefined || letOut) this.#waiters?.wakeAll();
    if (evidence === "failed") {
      this.#lastFailureAt = at;
      // Throttles while the circuit is not closed (probes into an outage) teach the pacer nothing.
      if (throttled && before === "closed") this.#throttled(at, reservedAt);
    }
    return change;
  }

  /** This circuit just opened on its account's throttle as a whole (`account`), or on its own (undefined). */
  holdFor(account: string | undefined): void {
    this.#heldBy = account;
  }

  /**
   * Its account, throttled as a whole, serves again: the circuit its throttle opened closes, what
   * the pacer learnt meanwhile is dropped, and every waiter asks again now. Returns the change.
   */
  release(at: number): CircuitChange | undefined {
    this.#heldBy = undefined;
    const change = this.#circuit.close(at);
    this.#pacer = undefined;
    this.#waiters?.wakeAll();
    return change;
  }

  /** A scope with nothing left to remember: closed, no failure for `rollingWindowInMs`, no pacer that still counts. */
  isRetirable(at: number): boolean {
    const calm = this.#circuit.stateAt(at) === "closed" && at - this.#lastFailureAt >= this.#settings.rollingWindowInMs;
    return calm && (this.#pacer === undefined || this.#forgotten(at));
  }

  /** Its status at `at` (see `PartitionStatus`). */
  status(at: number): PartitionStatus {
    const state = this.#circuit.stateAt(at);
    if (state !== "closed") return { state, available: !this.#circuit.refuses(at), retryAfterInMs: this.#circuit.retryAfterInMs(at) };
    const pacer = this.pacerAt(at);
    if (pacer === undefined || !pacer.rate.paced) return HEALTHY_PARTITION;
    const queueInMs = pacer.queueInMs(at);
    return { state: "paced", available: queueInMs === 0, retryAfterInMs: queueInMs, ratePerSecond: pacer.rate.rateAt(at) };
  }

  /** Its send rate while paced at `at`, else undefined. */
  pacedRate(at: number): number | undefined {
    const pacer = this.pacerAt(at);
    return pacer?.rate.paced === true ? pacer.rate.rateAt(at) : undefined;
  }

  /**
   * A throttled answer while the circuit was closed. A partition's first is no evidence (a growing
   * table's new ranges are each hot once): it gets only the counts; its pacer comes with the second,
   * and starts from them, so that its first cut need not wait for a new half second of sends (a
   * partition timing out has meanwhile been sent its circuit's worth of attempts).
   */
  #throttled(at: number, reservedAt: number): void {
    const pacing = this.#settings.pacing;
    if (pacing === undefined) return;
    const throttledLately = at - this.#lastThrottleAt < pacing.forgetAfterInMs;
    this.#lastThrottleAt = at;
    if (this.#pacer === undefined && !throttledLately) {
      this.#unpaced = { since: at, sent: 0, served: 0 };
      return;
    }
    if (this.#pacer === undefined) {
      this.#pacer = new Pacer(at, pacing, this.#unpaced);
      this.#unpaced = undefined;
    }
    // An attempt admitted before the scope had a pacer counts as reserved before any cut.
    if (this.#pacer.rate.throttled(reservedAt, at)) {
      logger.info(`Partition scope "${this.key}" is throttled: pacing it at ${this.#pacer.rate.rateAt(at).toFixed(1)} attempts/s.`);
    }
  }

  /** Calm for `forgetAfterInMs`: no longer paced, whether or not the sweep has come by yet. */
  #forgotten(at: number): boolean {
    const pacing = this.#settings.pacing;
    return pacing === undefined || at - this.#lastThrottleAt >= pacing.forgetAfterInMs;
  }

  #dropPacer(): void {
    this.#pacer = undefined;
    this.#waiters?.wakeAll();
  }
}
