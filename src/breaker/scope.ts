// One scope the breaker watches (a partition, or its account): what its controller's decisions are applied to.
import { QUIET_IN_MS, ScopeController, type ControllerSettings } from "../flow/scopeController.js";
import { WakeList, type WakeSource } from "../timing/wake.js";
import type { Send, Wait } from "./attemptGate.js";
import type { CircuitState } from "./partitionBreakerInterface.js";
import type { ScopeKeys } from "./scopeKeys.js";

/** What an attempt is sent under: its partition's scope (and key), its account's. */
export interface Route {
  readonly from: string;
  readonly partition: Scope | undefined;
  readonly account: Scope | undefined;
}

/** An attempt the breaker let go: the scopes that count it in flight (until its answer, or until it is taken for lost), and when. */
export class Attempt implements Send {
  readonly decision = "send";
  readonly sentAt: number;
  readonly route: Route;
  readonly paced: boolean;
  /** The scopes it probes: its gates that were out when it went. */
  readonly probes: readonly Scope[];
  readonly probe: boolean;
  /** It waited for its turn: the limit held it, so its answer may grow the limit. */
  readonly waited: boolean;
  #settled = false;

  constructor(sentAt: number, route: Route, gates: readonly Scope[], waited: boolean) {
    this.sentAt = sentAt;
    this.route = route;
    this.paced = gates.some((gate) => gate.control.ratePerSecond !== Infinity);
    this.probes = gates.filter((gate) => gate.control.out);
    this.probe = this.probes.length > 0;
    this.waited = waited;
    for (const scope of this.probes) scope.probesOut += 1;
  }

  /** Leaves the scopes that count it in flight; false when it had already (taken for lost, or given back). */
  settle(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.route.partition?.live.delete(this);
    this.route.account?.live.delete(this);
    for (const scope of this.probes) scope.probesOut -= 1;
    return true;
  }
}

/** An operation queued for a scope's next send: granted its turn when it comes (the newest first), and woken. */
export class Waiting implements Wait, WakeSource {
  readonly decision = "wait";
  readonly reason: "circuit" | "pacing";
  readonly delayInMs: number;
  readonly route: Route;
  /** When the operation first waited: the later, the sooner its turn. */
  readonly since: number;
  readonly wake: WakeSource = this;
  granted: Attempt | undefined;
  queue: Scope | undefined;
  /** Granted or dismissed: it wakes as soon as it listens (its turn may come between its sleeps). */
  #over = false;
  readonly #wakes = new WakeList();

  constructor(route: Route, reason: "circuit" | "pacing", delayInMs: number, since: number) {
    this.route = route;
    this.reason = reason;
    this.delayInMs = delayInMs;
    this.since = since;
  }

  listen(wake: () => void): () => void {
    if (!this.#over) return this.#wakes.listen(wake);
    wake();
    return () => undefined;
  }

  leave(): void {
    this.queue?.dequeue(this);
  }

  grant(attempt: Attempt): void {
    this.granted = attempt;
    this.dismiss();
  }

  /** Wakes it; with no turn granted (the breaker was disposed of), it asks again and passes. */
  dismiss(): void {
    this.#over = true;
    this.#wakes.wakeAll();
  }
}

/** A scope with trouble in its recent past, or watched while its account has some. */
export class Scope {
  readonly key: string;
  readonly service: ScopeKeys["service"];
  /** A partition's account scope key; undefined for an account. */
  readonly accountKey: string | undefined;
  readonly control: ScopeController;
  /** The circuit's state as the log and listeners were last told it (written by the announcer only). */
  announced: CircuitState = "closed";
  /** Attempts in flight and not taken for lost, oldest first. */
  readonly live = new Set<Attempt>();
  /** Operations backing off after a failure here: woken when the scope goes out or comes back. */
  readonly sleepers = new WakeList();
  /** Probes of it in flight (sent while it was out, not answered nor taken for lost). */
  probesOut = 0;
  /** Queued operations, oldest `since` first: the last is next. */
  readonly #waiters: Waiting[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = Infinity;
  #checkPending = false;

  constructor(key: string, service: ScopeKeys["service"], accountKey: string | undefined, at: number, settings: ControllerSettings, fastestInMs?: number) {
    this.key = key;
    this.service = service;
    this.accountKey = accountKey;
    this.control = new ScopeController(at, settings, fastestInMs);
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  get next(): Waiting | undefined {
    return this.#waiters.at(-1);
  }

  /** When an attempt may go next (`Infinity`: when an answer frees the window). */
  nextSendAt(at: number): number {
    return this.control.nextSendAt(at, this.live.size);
  }

  /** Whether a send is due now (within a timer's tick: a faster rate lets a few go per tick). */
  due(at: number): boolean {
    return this.nextSendAt(at) <= at + TICK_IN_MS;
  }

  /** The circuit's state as metrics and logs name it: out is `half_open` while a probe is due or in flight, else `open`. */
  stateAt(at: number): CircuitState {
    if (!this.control.out) return "closed";
    return this.probesOut > 0 || this.due(at) ? "half_open" : "open";
  }

  enqueue(waiting: Waiting): void {
    waiting.queue = this;
    const waiters = this.#waiters;
    let index = waiters.length;
    while (index > 0 && (waiters[index - 1] as Waiting).since > waiting.since) index -= 1;
    waiters.splice(index, 0, waiting);
  }

  dequeue(waiting: Waiting): void {
    waiting.queue = undefined;
    const index = this.#waiters.indexOf(waiting);
    if (index >= 0) this.#waiters.splice(index, 1);
  }

  /** When its attempts in flight are taken for lost (docs/flow-control.md, "Each kind of answer", no answer); `Infinity` with none. */
  lostAt(): number {
    const oldest = this.live.values().next().value;
    if (oldest === undefined) return Infinity;
    return Math.max(oldest.sentAt, this.control.servedAt) + Math.max(QUIET_IN_MS, 4 * this.control.smoothedInMs);
  }

  /** Sets the one `unref()`ed timer, only while there are waiters, for the next turn or the next loss (which frees the window). */
  schedule(at: number, onCheck: (scope: Scope) => void): void {
    if (this.#waiters.length === 0) return this.#clearTimer();
    const wakeAt = Math.min(this.nextSendAt(at), this.lostAt());
    if (wakeAt === this.#timerAt || wakeAt === Infinity) return;
    this.#clearTimer();
    this.#timerAt = wakeAt;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#timerAt = Infinity;
      this.checkSoon(onCheck);
    }, Math.max(1, wakeAt - at));
    this.#timer.unref?.();
  }

  /** Checks the scope after pending I/O: docs/flow-control.md, "Silence is judged after the answers already read". */
  checkSoon(onCheck: (scope: Scope) => void): void {
    if (this.#checkPending) return;
    this.#checkPending = true;
    setImmediate(() => {
      this.#checkPending = false;
      onCheck(this);
    });
  }

  /** Nothing queued and no trouble of its own: nothing left to remember (its attempts in flight are answered unwatched). */
  isRetirable(): boolean {
    return this.#waiters.length === 0 && !this.control.troubled;
  }

  /** Stops the timer and wakes every waiter (the breaker is disposed of, or forgot it: they ask again). */
  clear(): void {
    this.#clearTimer();
    for (const waiting of this.#waiters.splice(0)) waiting.dismiss();
    this.sleepers.wakeAll();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = Infinity;
  }
}

/** Sends due within this long of now go together: the timer's own granularity. */
const TICK_IN_MS = 1;
