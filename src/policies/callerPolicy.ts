import { logger } from "../logging/logger.js";
import type { LocalWaitReason } from "../observers/retryEvents.js";
import { numberOption, optionsObject, optionWhere, type OptionsShape } from "../validation/optionSchema.js";

/**
 * Who calls the client, as the caller declares it (docs/flow-control.md): it decides whether
 * an operation may wait at a local refusal. Every option is optional; `{}` (the default) is
 * an open-loop caller.
 */
export interface CallerOptions {
  /**
   * A bounded caller of this many operations at a time (a worker pool, a queue consumer, a
   * semaphore): an integer >= 1. Operations waiting on troubled partitions may then use only
   * the pool's spare slots, never the last tenth (at least one), and the next one fails at
   * once with `retryAfterInMs`. Defaults to none: an open-loop caller, which waits within
   * its deadline.
   */
  concurrency?: number;
  /** Never wait at a local refusal (an open circuit, a paced queue, an empty retry budget). Defaults to false. */
  failFast?: boolean;
}

/** Every {@link LocalWaitReason}. */
export const LOCAL_WAIT_REASONS: readonly LocalWaitReason[] = ["circuit", "pacing", "budget", "backoff"];

/** `caller` after validation. */
export type CallerSettings =
  | { readonly kind: "open" }
  | { readonly kind: "failFast" }
  | { readonly kind: "bounded"; readonly concurrency: number };

const OPEN: CallerSettings = Object.freeze({ kind: "open" });

const checkCallerOptions = optionsObject(
  {
    concurrency: numberOption({ min: 1, max: 1_000_000, integer: true }),
    failFast: optionWhere<boolean>((value) => typeof value === "boolean", "a boolean"),
  } satisfies OptionsShape<CallerOptions>,
  { expected: "an options object ({ concurrency } or { failFast })" },
  (o, at) => {
    if (o.concurrency !== undefined && o.failFast !== undefined) {
      throw new TypeError(`${at("concurrency")} and ${at("failFast")} exclude each other: a bounded caller waits within its spare slots, failFast never waits.`);
    }
  },
);

/** Validates `caller` once: `concurrency` and `failFast` exclude each other; null and unknown keys are refused. */
export function resolveCallerOptions(option: unknown, name = "caller"): CallerSettings {
  if (option === undefined) return OPEN;
  const { concurrency, failFast } = checkCallerOptions(option, name);
  if (failFast === true) return { kind: "failFast" };
  return concurrency === undefined ? OPEN : { kind: "bounded", concurrency };
}

/** The slots a bounded caller of `concurrency` keeps free of waiters: a tenth, at least one. */
export function reserveOf(concurrency: number): number {
  return Math.max(1, Math.round(concurrency / 10));
}

/** One operation waiting without sending: what it waits for. Its place among waiters is when it began. */
export interface Waiter {
  reason: LocalWaitReason;
}

/**
 * An open loop with at least this many operations in flight, over half of them waiting, and
 * no growth in flight for {@link STARVED_FOR_IN_MS}, looks like an undeclared pool.
 */
const STARVED_MIN_IN_FLIGHT = 4;
const STARVED_FOR_IN_MS = 2_000;

/**
 * The caller policy of one retry policy (one per install): the client's operations in flight
 * and those waiting, by reason, and the answer to "may this operation wait now?" at every
 * local refusal (an open circuit, a paced queue, an empty retry budget, and for a bounded
 * caller a backoff too, since a sleeping retry holds a worker). Counts only: no timing guess.
 *
 * - open loop: always (within the deadline, which the loop checks);
 * - failFast: never at a local refusal; a backoff is slept;
 * - bounded (N, reserve R): a wait may start while the slots in use (the operations in
 *   flight, itself and the waiters included, or the caller's units of work under way when
 *   it tracks them and they are more) are at most N - R; a waiter whose rank (oldest first)
 *   is at least N - R - (slots in use not waiting) must be let go, newest first.
 */
export class CallerPolicy {
  readonly settings: CallerSettings;
  /** N - R for a bounded caller; Infinity otherwise. */
  readonly #room: number;
  #inFlight = 0;
  /** Units of the caller's work under way ({@link track}): a worker busy outside the client counts too. */
  #works = 0;
  /** In the order they began waiting. */
  readonly #waiters = new Set<Waiter>();
  readonly #waiting: Record<LocalWaitReason, number> = { circuit: 0, pacing: 0, budget: 0, backoff: 0 };
  readonly #now: () => number;
  #starvedSince: number | undefined;
  #starvedPeak = 0;
  #warned = false;

  /** `now` (ms) is read only while operations wait, for the starved-pool warning; tests pass their own. */
  constructor(settings: CallerSettings = OPEN, now: () => number = () => performance.now()) {
    this.settings = settings;
    this.#room = settings.kind === "bounded" ? settings.concurrency - reserveOf(settings.concurrency) : Infinity;
    this.#now = now;
  }

  /** Operations of this client in flight now, waiters included. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Operations waiting now, for `reason` or in all. */
  waiting(reason?: LocalWaitReason): number {
    return reason === undefined ? this.#waiters.size : this.#waiting[reason];
  }

  started(): void {
    this.#inFlight += 1;
  }

  /** Runs one unit of the caller's work as one of its slots while it runs (`ResilienceHandle.work` says why). */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.#works += 1;
    try {
      return await work();
    } finally {
      this.#works -= 1;
    }
  }

  /** The caller's slots in use: its tracked units of work, or the client's operations in flight when more. */
  #busySlots(): number {
    return this.#works > this.#inFlight ? this.#works : this.#inFlight;
  }

  ended(): void {
    this.#inFlight -= 1;
  }

  /** Whether an operation not waiting yet may begin a wait for `reason` now. */
  mayStartWait(reason: LocalWaitReason): boolean {
    const s = this.settings;
    if (s.kind === "open") return true;
    if (s.kind === "failFast") return reason === "backoff";
    return this.#busySlots() <= this.#room;
  }

  /** Whether `waiter` may go on waiting (for `reason`), or must be let go because healthy work needs its slot. */
  mayKeepWaiting(waiter: Waiter, reason: LocalWaitReason): boolean {
    const s = this.settings;
    if (s.kind === "open") {
      this.#watchForStarvation();
      return true;
    }
    if (s.kind === "failFast") return reason === "backoff";
    return !this.mustRelease(waiter);
  }

  /** A bounded caller's waiter whose rank is past the waiters' share of the free slots. */
  mustRelease(waiter: Waiter): boolean {
    if (this.settings.kind !== "bounded") return false;
    const busy = this.#busySlots() - this.#waiters.size;
    const allowed = this.#room - busy;
    let rank = 0;
    for (const other of this.#waiters) {
      if (other === waiter) return rank >= allowed;
      rank += 1;
    }
    return false;
  }

  beginWait(reason: LocalWaitReason): Waiter {
    const waiter: Waiter = { reason };
    this.#waiters.add(waiter);
    this.#waiting[reason] += 1;
    if (this.settings.kind === "open") this.#watchForStarvation();
    return waiter;
  }

  /** The waiter now waits for something else; it keeps its rank. */
  changeReason(waiter: Waiter, reason: LocalWaitReason): void {
    this.#waiting[waiter.reason] -= 1;
    this.#waiting[reason] += 1;
    waiter.reason = reason;
  }

  endWait(waiter: Waiter): void {
    if (!this.#waiters.delete(waiter)) return;
    this.#waiting[waiter.reason] -= 1;
  }

  /**
   * Logs, once, when an open-loop install looks like a starved pool: most operations in flight
   * waiting for a couple of seconds while the operations in flight stop growing. It decides nothing.
   */
  #watchForStarvation(): void {
    if (this.#warned) return;
    const inFlight = this.#inFlight;
    if (inFlight < STARVED_MIN_IN_FLIGHT || this.#waiters.size * 2 <= inFlight) {
      this.#starvedSince = undefined;
      return;
    }
    const now = this.#now();
    if (this.#starvedSince === undefined || inFlight > this.#starvedPeak) {
      this.#starvedSince = now;
      this.#starvedPeak = inFlight;
      return;
    }
    if (now - this.#starvedSince < STARVED_FOR_IN_MS) return;
    this.#warned = true;
    logger.warning(
      `${this.#waiters.size} of this client's ${inFlight} operations in flight have waited on troubled partitions for over ` +
        `${STARVED_FOR_IN_MS / 1000} s while no new operations arrived: if the caller runs at most N operations at a time ` +
        "(a worker pool, a queue consumer, a semaphore), declare it with caller: { concurrency: N } so that waiting never starves its other work.",
    );
  }
}
