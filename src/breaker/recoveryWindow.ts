// The way back from an outage: a window of attempts in flight per account while the operations that waited drain,
// newest first, wrapped around the partition breaker's admission (partitionBreaker.ts).
import type { RequestAddress } from "../address/requestAddress.js";
import type { WakeSource } from "../timing/wake.js";
import type { SendAdmission } from "./attemptGate.js";
import type { PartitionBreaker } from "./partitionBreakerInterface.js";
import { accountKeyOf, MAX_ACCOUNTS } from "./accountGate.js";

/**
 * Attempts in flight to an account just back from an outage, at first. Measured through the bench's
 * proxy to Azurite (docs/benchmarks.md §9): 600 upserts sent at once are served at about half the rate
 * of the same 600 sent 8 to 32 at a time, and each of them (and each newcomer among them) waits for
 * nearly all of them, since the server works on all at once; 16 at a time is at the rig's full rate.
 */
export const RECOVERY_WINDOW_START = 16;
/** The most the window grows to while its answers come back as fast as the fastest: then it is no limit. */
const RECOVERY_WINDOW_MAX = 1024;
/** An answer within this factor of the fastest the window has seen (plus {@link QUEUE_SLACK_IN_MS}) found no queue: the window grows by one. */
const NO_QUEUE_FACTOR = 2;
const QUEUE_SLACK_IN_MS = 2;
/**
 * A waiter not woken for its turn asks again after this long, keeping its place: only a turn
 * handed to a waiter that has just stopped listening is lost, and this bounds what that costs.
 */
export const TURN_POLL_IN_MS = 1_000;
/** A window is given up this long after it was opened, whatever it holds: a slot never given back cannot hold an account for ever. */
const MAX_WINDOW_IN_MS = 30_000;

/** One waiter's turn: woken alone, the newest first. Woken before it listens, it wakes as it starts listening. */
class Turn implements WakeSource {
  /** When its operation first met trouble (refused, or failed): the later, the sooner its turn. */
  readonly since: number;
  #wake: (() => void) | undefined;
  #state: "new" | "listening" | "gone" | "woken" = "new";

  constructor(since: number) {
    this.since = since;
  }

  listen(wake: () => void): () => void {
    if (this.#state === "woken") {
      wake();
      return () => undefined;
    }
    this.#state = "listening";
    this.#wake = wake;
    return () => {
      if (this.#state === "listening") this.#state = "gone";
      this.#wake = undefined;
    };
  }

  /**
   * The waiter asks again after its poll and still finds no slot: it keeps its place (true), unless
   * its turn was passed over meanwhile (false: it takes a new one).
   */
  renew(): boolean {
    if (this.#state !== "gone") return false;
    this.#state = "new";
    return true;
  }

  /** Wakes the waiter; false when it has stopped waiting (its poll ended first, or it was aborted). */
  wake(): boolean {
    if (this.#state === "gone" || this.#state === "woken") {
      this.#state = "woken";
      return false;
    }
    const wake = this.#wake;
    this.#state = "woken";
    this.#wake = undefined;
    wake?.();
    return true;
  }
}

/**
 * One account's window: how many attempts may be in flight, how many are, and who waits for a
 * turn. Every attempt to the account takes a slot while the window is open, first attempts
 * and retries alike, so that the backlog does not crowd out newcomers at the server; a freed slot
 * goes to the newest waiter (as Facebook's adaptive LIFO serves queues under overload): an
 * operation arriving now is served at the round trip, the backlog drains behind it at what the
 * account serves beyond the arrivals. The limit grows by one for each answer that found no queue
 * (within twice the fastest answer seen): about a doubling per round trip while the account keeps
 * up, as TCP's slow start, so a service that takes the whole backlog at once is sent it within a
 * few round trips.
 */
class Window {
  /** Its account's key (`service|account`). */
  readonly key: string;
  readonly openedAt: number;
  #limit = RECOVERY_WINDOW_START;
  #inFlight = 0;
  #fastestInMs = Infinity;
  readonly #turns: Turn[] = [];

  constructor(key: string, at: number) {
    this.key = key;
    this.openedAt = at;
  }

  take(): boolean {
    if (this.#inFlight >= this.#limit) return false;
    this.#inFlight += 1;
    return true;
  }

  /**
   * A turn for a waiter whose operation first met trouble at `since` (`Infinity`: never, it
   * arrived after the fault): the stack is kept in that order, the newest on top.
   */
  turn(since: number): Turn {
    const turn = new Turn(since);
    const turns = this.#turns;
    let low = 0;
    let high = turns.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((turns[middle] as Turn).since <= since) low = middle + 1;
      else high = middle;
    }
    turns.splice(low, 0, turn);
    return turn;
  }

  /** A slot back (`tookInMs` from taking it to the answer, when one came and was served), and the newest waiter woken. */
  give(tookInMs: number | undefined): void {
    this.#inFlight = Math.max(0, this.#inFlight - 1);
    if (tookInMs !== undefined) {
      if (tookInMs < this.#fastestInMs) this.#fastestInMs = tookInMs;
      if (tookInMs <= NO_QUEUE_FACTOR * this.#fastestInMs + QUEUE_SLACK_IN_MS && this.#limit < RECOVERY_WINDOW_MAX) this.#limit += 1;
    }
    let free = this.#limit - this.#inFlight;
    while (free > 0 && this.#turns.length > 0) if ((this.#turns.pop() as Turn).wake()) free -= 1;
  }

  /** Nothing in flight and nobody waiting: the way back is over. */
  get idle(): boolean {
    return this.#inFlight === 0 && this.#turns.length === 0;
  }
}

/**
 * Gives `breaker` a recovery window per account, in place (its `admit`, `record`, `abandon` and
 * `dispose` wrap its own): a window opens when one of the account's circuits closes (its probe
 * found the partition back, or the account serves again after a throttle as a whole), and is given
 * up when nothing is in flight through it and nobody waits. While none is open it costs one map
 * size read per admission.
 */
export function withRecoveryWindows<B extends PartitionBreaker>(breaker: B): B {
  const { admit, record, abandon, dispose } = breaker;
  const windows = new Map<string, Window>();
  /** Attempts holding a slot: the admission handed out, its window and when the slot was taken. */
  const held = new WeakMap<SendAdmission, { window: Window; at: number }>();
  /** Turns waited for: the wait handed out → the breaker's own admission (confirmed again when the turn comes) and the turn. */
  const waiting = new WeakMap<SendAdmission, { admission: SendAdmission; turn: Turn }>();
  /**
   * When each operation first met trouble (its first refusal or failure): its turn's place, newest
   * first. Woken all at once, waiters ask again in no useful order; this is about their arrival.
   * Written only on a refusal or a failure, so the success path pays nothing.
   */
  const troubledSince = new WeakMap<RequestAddress, number>();
  const noteTrouble = (address: RequestAddress): void => {
    if (!troubledSince.has(address)) troubledSince.set(address, Date.now());
  };
  /** The address whose answer the breaker is learning from: a circuit that closes meanwhile is its account's. */
  let recording: RequestAddress | undefined;
  breaker.onTransition(({ to }) => {
    const key = to === "closed" && recording !== undefined ? accountKeyOf(recording) : undefined;
    if (key === undefined || windows.has(key)) return;
    windows.set(key, new Window(key, Date.now()));
    if (windows.size > MAX_ACCOUNTS) windows.delete(windows.keys().next().value as string);
  });

  const windowOf = (address: RequestAddress, at: number): Window | undefined => {
    const key = accountKeyOf(address);
    const window = key === undefined ? undefined : windows.get(key);
    if (window === undefined) return undefined;
    if (at - window.openedAt < MAX_WINDOW_IN_MS) return window;
    windows.delete(key as string);
    return undefined;
  };

  /**
   * The slot `admission` holds, if any, goes back; `served`: its answer came and was a success (the
   * window learns from its time). With no window open, a slot still held is a given-up window's:
   * nothing to give back, and the success path looks nothing up.
   */
  const release = (admission: SendAdmission, served: boolean): void => {
    if (windows.size === 0) return;
    const slot = held.get(admission);
    if (slot === undefined) return;
    held.delete(admission);
    const window = slot.window;
    window.give(served ? Date.now() - slot.at : undefined);
    if (window.idle && windows.get(window.key) === window) windows.delete(window.key);
  };

  breaker.admit = (address, remainingInMs, reserved) => {
    const previous = reserved === undefined ? undefined : waiting.get(reserved);
    const admission = admit(address, remainingInMs, previous?.admission ?? reserved);
    if (admission.decision === "refuse") noteTrouble(address);
    // A probe is never held back (it holds its circuit half-open); a paced wait takes its turn when its slot comes.
    if (windows.size === 0 || admission.decision !== "send" || admission.delayInMs > 0 || admission.probe === true) return admission;
    const at = Date.now();
    const window = windowOf(address, at);
    if (window === undefined) return admission;
    if (window.take()) {
      const sent: SendAdmission = { ...admission };
      held.set(sent, { window, at });
      return sent;
    }
    // The ticket of the wait it continues: the loop reads a new admission with its own ticket and a delay as the rest of a paced wait.
    const ticket: unknown = reserved?.ticket ?? admission.ticket ?? {};
    const turn = previous !== undefined && previous.turn.renew() ? previous.turn : window.turn(troubledSince.get(address) ?? Infinity);
    const wait: SendAdmission = { decision: "send", delayInMs: Math.min(TURN_POLL_IN_MS, Math.max(1, remainingInMs)), ticket, paced: admission.paced, wake: turn };
    waiting.set(wait, { admission, turn });
    return wait;
  };
  breaker.record = (address, admission, result) => {
    const served = result.outcomeClass === "success";
    release(admission, served);
    if (!served && result.outcomeClass !== "permanent") noteTrouble(address);
    recording = address;
    try {
      record(address, admission, result);
    } finally {
      recording = undefined;
    }
  };
  breaker.abandon = (address, admission) => {
    release(admission, false);
    abandon(address, waiting.get(admission)?.admission ?? admission);
  };
  breaker.dispose = () => {
    windows.clear();
    dispose();
  };
  return breaker;
}
