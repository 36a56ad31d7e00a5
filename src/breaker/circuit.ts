import type { CircuitState } from "./circuitStateSource.js";

/** What every circuit of one breaker shares: its options, resolved once. */
export interface CircuitConfig {
  /** How long a circuit stays open before one probe may go through. */
  readonly resetTimeoutInMs: number;
  /** Rebalancing failures in a row (with no success for {@link QUIET_IN_MS}) that open it. */
  readonly consecutiveFailures: number;
  /** While a probe is out, how soon a refused attempt may ask again (its waiters are also woken when it closes). */
  readonly halfOpenPollInMs: number;
  /**
   * A probe unreported this long may be followed by another: it is slow (a partition that times out
   * answers only after the service's timeout), lost, or was admitted but never sent.
   */
  readonly probeLostAfterInMs: number;
}

/** A change of one circuit's state, as {@link Circuit.record} returns it. */
export interface CircuitChange {
  readonly from: CircuitState;
  readonly to: CircuitState;
}

/**
 * The circuit's state as stored. An `open` phase past its reset timeout *reads* as half-open
 * with no probe out (see `stateAt`): the probe falls due with time, not with a call, so
 * nothing needs to write it then.
 */
type Phase =
  | { readonly name: "closed" }
  | { readonly name: "open"; readonly openedAt: number; readonly resetInMs: number }
  | { readonly name: "half_open"; readonly probeAdmittedAt: number | undefined };

const CLOSED: Phase = Object.freeze({ name: "closed" });
const HALF_OPEN_NO_PROBE: Phase = Object.freeze({ name: "half_open", probeAdmittedAt: undefined });

/** What the breaker knows of an answer beyond its evidence ({@link Circuit.record}). */
export interface AnswerContext {
  /**
   * How long the circuit stays open if this answer opens it; defaults to `resetTimeoutInMs`. The
   * breaker passes a shorter one when the circuit is its account's (see {@link ACCOUNT_PROBE_IN_MS}).
   */
  readonly resetInMs?: number;
  /**
   * The whole account is out (accountGate.ts: its circuits' rule counted over the account, or
   * refused connections in a row): a failure opens the circuit at once, with no count of its own. A
   * partition's count would start only at its first failure, and after a frozen endpoint resets
   * every connection at once, every partition's retries and newcomers went out before any opened.
   */
  readonly accountOut?: boolean;
  /**
   * When the answered attempt was admitted as a probe, or `null` when it was none: only the probe out
   * now reopens a half-open circuit (a straggler's or a superseded probe's late failure is no news).
   * Undefined: the caller does not say, and the answer is taken for the probe's.
   */
  readonly probeAt?: number | null;
}

/**
 * One partition's circuit, as a small synchronous state machine (no timers: `now` is passed
 * in). It opens only on a partition that serves nothing: `consecutiveFailures` rebalancing
 * failures in a row *and* no success for {@link QUIET_IN_MS}. A hot partition keeps serving
 * at capacity, so its successes keep arriving between throttled answers and it never opens
 * (its pacing handles it); a partition being moved answers nothing but failures.
 *
 * Its state is private and written in one place (`#enter`). Only `record` changes the state
 * by a call, and returns the change; open → half-open happens by time and is read, not
 * written. The queries (`stateAt`, `refuses`, `retryAfterInMs`) change nothing.
 *
 * Why not opossum, which this package used before: opossum opens on an error *percentage*,
 * exactly the rule that starved hot partitions, and its `fire(action)` wraps an attempt in a
 * promise, where the retry loop and `partitionStatus` need a synchronous answer.
 */
export class Circuit {
  #phase: Phase = CLOSED;
  #consecutiveFailures = 0;
  /** Treats the moment it was made (at a failure) as the last known good one. */
  #lastSuccessAt: number;
  readonly #config: CircuitConfig;

  constructor(now: number, config: CircuitConfig) {
    this.#lastSuccessAt = now;
    this.#config = config;
  }

  /** The state at `now`: open past its reset timeout reads as half-open (the probe is due). */
  stateAt(now: number): CircuitState {
    const phase = this.#phase;
    return phase.name === "open" && now - phase.openedAt >= phase.resetInMs ? "half_open" : phase.name;
  }

  /** Whether an attempt asked now would be refused: open, or half-open with its probe out. */
  refuses(now: number): boolean {
    const phase = this.#phase;
    if (phase.name === "open") return now - phase.openedAt < phase.resetInMs;
    // A probe unreported for probeLostAfterInMs was admitted but never sent (its operation ended first: retry
    // budget spent, aborted while paced) or is lost: let another go, or the circuit would refuse for ever.
    if (phase.name === "half_open") return phase.probeAdmittedAt !== undefined && now - phase.probeAdmittedAt < this.#config.probeLostAfterInMs;
    return false;
  }

  /** Milliseconds until a refused attempt may ask again: the probe time, or a short poll while a probe is out; 0 when not refused. */
  retryAfterInMs(now: number): number {
    if (!this.refuses(now)) return 0;
    const phase = this.#phase;
    return phase.name === "open" ? phase.openedAt + phase.resetInMs - now : this.#config.halfOpenPollInMs;
  }

  /**
   * Whether an attempt may go out now. In half-open the admitted attempt is the probe, and the
   * others are refused until it reports. Admitting never changes the state (a due probe
   * already reads half-open), so there is no change to return.
   */
  admit(now: number): boolean {
    if (this.refuses(now)) return false;
    if (this.#phase.name !== "closed") this.#enter({ name: "half_open", probeAdmittedAt: now }, now);
    return true;
  }

  /**
   * Whether the probe admitted at `admittedAt` is still the one out: false once the circuit
   * has closed, opened again, or taken it for lost and let another go (its holder's paced
   * slot may lie past probeLostAfterInMs).
   */
  holdsProbe(admittedAt: number): boolean {
    const phase = this.#phase;
    return phase.name === "half_open" && phase.probeAdmittedAt === admittedAt;
  }

  /**
   * Closes the circuit from outside: what opened it has ended with no probe of its own (its
   * account, throttled as a whole, serves again). Returns the change, if any.
   */
  close(now: number): CircuitChange | undefined {
    this.#consecutiveFailures = 0;
    this.#lastSuccessAt = now;
    return this.#enter(CLOSED, now);
  }

  /**
   * Gives back a probe admitted but not sent (refused by the pacing after the circuit let it, or
   * its operation ended while paced), so another may go at once. With `admittedAt`, only the
   * probe admitted then: one whose holder outlasted probeLostAfterInMs may have been replaced.
   */
  returnProbe(now: number, admittedAt?: number): void {
    const phase = this.#phase;
    if (phase.name !== "half_open" || phase.probeAdmittedAt === undefined) return;
    if (admittedAt === undefined || phase.probeAdmittedAt === admittedAt) this.#enter(HALF_OPEN_NO_PROBE, now);
  }

  /**
   * Counts an attempt's outcome; returns the change of state it made, if any. `evidence` is
   * `"served"` (any answer that proves the partition works, even a 404), `"failed"` (a
   * rebalancing outcome) or `"none"` (aborted: says nothing about the partition). `answer` says
   * what else the breaker knows of it (see {@link AnswerContext}).
   */
  record(evidence: "served" | "failed" | "none", now: number, answer: AnswerContext = {}): CircuitChange | undefined {
    const phase = this.#phase;
    const resetInMs = answer.resetInMs ?? this.#config.resetTimeoutInMs;
    if (evidence === "served") {
      this.#consecutiveFailures = 0;
      this.#lastSuccessAt = now;
      return this.#enter(CLOSED, now);
    }
    // The probe out failed, or was aborted (no evidence to close on): open again. A probe that answers after
    // another was let go, or an attempt sent before the circuit opened, is no news: at a fixed probe rate into a
    // slow partition, each late failure reopened the circuit after the partition was back (0.5 s late in one seed).
    const probeOut = phase.name === "half_open" ? phase.probeAdmittedAt : undefined;
    if (probeOut !== undefined && (answer.probeAt === undefined || answer.probeAt === probeOut)) return this.#enter({ name: "open", openedAt: now, resetInMs }, now);
    if (evidence !== "failed") return undefined;
    this.#consecutiveFailures += 1;
    const servesNothing = answer.accountOut === true || (this.#consecutiveFailures >= this.#config.consecutiveFailures && now - this.#lastSuccessAt >= QUIET_IN_MS);
    return phase.name === "closed" && servesNothing ? this.#enter({ name: "open", openedAt: now, resetInMs }, now) : undefined;
  }

  /** The one place the state changes; returns the change as `stateAt(now)` reads it, if any. */
  #enter(phase: Phase, now: number): CircuitChange | undefined {
    const from = this.stateAt(now);
    this.#phase = phase;
    const to = this.stateAt(now);
    return from === to ? undefined : { from, to };
  }
}

/**
 * How long a partition must have served nothing before its circuit may open. A hot
 * partition at capacity answers successes every few milliseconds between its throttled
 * ones; a quarter second without one, across several failures in a row, is a partition
 * that serves nothing. For a partition that takes a few operations a second, this delays its
 * circuit by one or two attempts at most (docs/benchmarks.md, "Why the code is as it is").
 */
export const QUIET_IN_MS = 250;

/**
 * How long a partition's circuit stays open when its account holds it: it opened while the whole
 * account served nothing (throttled as a whole, or its endpoint refusing, frozen or resetting
 * every connection), not while one partition was being moved. One answer then tells for every
 * partition of the account, so its held circuits share one probe per this period
 * (accountGate.ts): an account of ten partitions out for 3 s costs 30 probes, and its return is
 * seen within a tenth of a second, at its first success anywhere, which closes them all.
 */
export const ACCOUNT_PROBE_IN_MS = 100;
