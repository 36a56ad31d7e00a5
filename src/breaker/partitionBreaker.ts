// The per-partition gate: one controller per scope (flow/scopeController.ts), a partition and its account
// running the same code. admit carries out what the controllers decide; record hands each answer to the
// scope whose evidence it is. Its interface is partitionBreakerInterface.ts.
import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { evidenceOf, GAIN, SPREAD, type ControllerSettings, type Evidence } from "../flow/scopeController.js";
import { eitherWake } from "../timing/wake.js";
import { SEND_NOW, type Admission, type AdmissionRequest, type Send } from "./attemptGate.js";
import { CircuitAnnouncer } from "./circuitAnnouncer.js";
import { resolvePartitionBreakerOptions, type PartitionBreakerOptions } from "./partitionBreakerOptions.js";
import { HEALTHY_PARTITION, type CircuitState, type PacedScope, type PartitionBreaker, type PartitionStatus } from "./partitionBreakerInterface.js";
import { Attempt, Scope, Waiting, type Route } from "./scope.js";
import { createScopeKeyReader } from "./scopeKeys.js";
import { ScopeRegistry } from "./scopeRegistry.js";

export type { PartitionBreaker } from "./partitionBreakerInterface.js";

/**
 * Creates a {@link PartitionBreaker}. State is made at a scope's first unserved answer (until then no
 * attempt is even scoped); while any scope has state, every attempt is watched under its partition and
 * its account, so that one that never answers is seen. A scope with nothing left to limit is forgotten
 * at once; at most `maxScopes` are kept, idle ones swept after `idleTtlInMs` by one `unref()`ed timer.
 *
 * @example
 * const breaker = createPartitionBreaker({ service: "table" });
 * const policy = resilientRetryPolicy({ gate: breaker });
 * // ... on shutdown:
 * breaker.dispose();
 */
export function createPartitionBreaker(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const o = resolvePartitionBreakerOptions(options, "");
  const partitionSettings: ControllerSettings = { probeIntervalInMs: o.resetTimeoutInMs, failuresToOut: o.consecutiveFailures, spread: 1, pacing: o.pacing };
  // One answer of an account tells for at least SPREAD partitions: it is probed as often as they would be together.
  const accountSettings: ControllerSettings = { ...partitionSettings, probeIntervalInMs: o.resetTimeoutInMs / SPREAD, spread: SPREAD };
  const now = (): number => Date.now();
  const announcer = new CircuitAnnouncer();
  const registry = new ScopeRegistry<Scope>(o.maxScopes, o.idleTtlInMs, (scope) => scope.isRetirable());
  const scopeKeyOf = createScopeKeyReader(o.getScope, o.service);
  let disposed = false;

  const routeOf = (address: RequestAddress, at: number, create: boolean): Route => {
    const key = scopeKeyOf(address);
    const scope = address.scope;
    // A request with no partition scope (an account's or a table's own operation) bypasses the breaker.
    const accountKey = scope === undefined || key === undefined ? undefined : `${scope.service}|${scope.account}`;
    const service = address.service ?? o.service ?? "table";
    let account = accountKey === undefined ? undefined : registry.touch(accountKey);
    if (account === undefined && create && accountKey !== undefined) account = registry.add(accountKey, new Scope(accountKey, service, undefined, at, accountSettings));
    let partition = key === undefined ? undefined : registry.touch(key);
    if (partition === undefined && create && key !== undefined) {
      partition = registry.add(key, new Scope(key, service, accountKey, at, partitionSettings, account?.control.fastestInMs));
    }
    return { from: key ?? "", partition, account };
  };

  /** The scopes whose limits an attempt on `route` keeps: while its account serves nothing, the account alone (its probes answer for every partition). */
  const gatesOf = ({ partition, account }: Route): Scope[] => {
    if (account === undefined) return partition === undefined ? [] : [partition];
    return partition === undefined || account.control.out ? [account] : [partition, account];
  };

  /** Lets an attempt go on `route` now: counted in flight under its scopes, a send taken from each of its gates. */
  const send = (route: Route, at: number, waited: boolean): Attempt => {
    const gates = gatesOf(route);
    const attempt = new Attempt(at, route, gates, waited);
    for (const scope of [route.partition, route.account]) scope?.live.add(attempt);
    for (const gate of gates) {
      gate.control.sent(at);
      if (gate.control.out) gate.probeOut = true;
      announcer.observe(gate, at);
    }
    return attempt;
  };

  const admit = (address: RequestAddress, ask: AdmissionRequest): Admission => {
    if (disposed || registry.size === 0) return SEND_NOW;
    const waited = ask.waited instanceof Waiting ? ask.waited : undefined;
    if (waited?.granted !== undefined) return waited.granted;
    const at = now();
    const route = routeOf(address, at, true);
    if (route.partition === undefined && route.account === undefined) return SEND_NOW;
    for (const scope of [route.partition, route.account]) {
      if (scope === undefined) continue;
      takeLost(scope, at);
      // An operation's first ask: what the scope's callers ask, whether or not it goes now.
      if (!ask.retry && waited === undefined) scope.control.asked(at);
    }
    // A newcomer goes when a send is due (the newest first); one asking again, when it is also next in its queue.
    const blocked = gatesOf(route).find((gate) => !gate.due(at) || (waited !== undefined && gate.waiting > 0 && gate.next !== waited));
    if (blocked === undefined) {
      waited?.leave();
      const attempt = send(route, at, waited !== undefined);
      for (const gate of gatesOf(route)) pump(gate, at);
      return attempt;
    }
    return wait(blocked, route, at, ask, waited);
  };

  /** Queued for `gate`'s next send, or refused when that is further off than the caller may wait. */
  const wait = (gate: Scope, route: Route, at: number, ask: AdmissionRequest, waited: Waiting | undefined): Admission => {
    const out = gate.control.out;
    const dueAt = gate.nextSendAt(at);
    // Until the next send (the newest goes first): the next probe when out, an answer freeing the window when it is full.
    const untilInMs = dueAt === Infinity ? gate.lostAfterInMs : Math.max(0, dueAt - at);
    waited?.leave();
    // While a probe is out, its answer may bring the scope back at any moment: the caller waits what it may for it.
    const probeAnswers = out && gate.probeOut && ask.queueForInMs > 0;
    if (untilInMs > ask.queueForInMs && !probeAnswers) return { decision: "refuse", reason: out ? "circuit-open" : "paced", scope: gate.key, retryAfterInMs: Math.ceil(untilInMs) };
    const waiting = new Waiting(route, out ? "circuit" : "pacing", Math.max(1, Math.min(untilInMs, ask.queueForInMs)), waited?.since ?? at);
    gate.enqueue(waiting);
    pump(gate, at);
    return waiting;
  };

  /**
   * Grants `scope`'s waiters their turns while its sends are due, newest first (one blocked by its other gate
   * moves to that gate's queue), then sets its timer for the next.
   */
  const pump = (scope: Scope, at: number): void => {
    for (let next = scope.next; next !== undefined && scope.due(at); next = scope.next) {
      next.leave();
      const blocked = gatesOf(next.route).find((gate) => gate !== scope && !gate.due(at));
      if (blocked === undefined) {
        next.grant(send(next.route, at, true));
      } else {
        blocked.enqueue(next);
        blocked.schedule(at, onTimer);
      }
    }
    scope.schedule(at, onTimer);
  };

  const record = (address: RequestAddress, sent: Send, result: AttemptResult): void => {
    if (disposed) return;
    const evidence = evidenceOf(result.outcomeClass);
    const unserved = evidence === "throttled" || evidence === "failed";
    if (!(sent instanceof Attempt)) {
      // Sent unwatched: while nothing is watched, only a first trouble makes state (the success path ends here).
      if (evidence === undefined || (!unserved && registry.size === 0)) return;
      const at = now();
      return learn(evidence, -Infinity, at, routeOf(address, at, unserved), false);
    }
    const at = now();
    sent.settle();
    // Taken for lost already: only a success still says something.
    if (evidence !== undefined && !(sent.lost && unserved)) learn(evidence, sent.sentAt, at, sent.route, sent.waited);
    for (const scope of [sent.route.partition, sent.route.account]) if (scope !== undefined) pump(scope, at);
  };

  /**
   * Hands an answer to the scopes whose evidence it is: a served one to both; an unserved one to the account
   * when it serves nothing, or when its failures come from several partitions and this one fails at most GAIN
   * times as often as the account as a whole (every partition of a throttled account fails about as much; one
   * offline among serving ones fails far more), else to the partition.
   */
  const learn = (evidence: Evidence, sentAt: number, at: number, route: Route, waited: boolean): void => {
    const { from, partition, account } = route;
    const unserved = evidence === "throttled" || evidence === "failed";
    // An answer that is no success says neither that the scope serves nor that it fails.
    if (evidence !== "answered") {
      partition?.control.observe(unserved, from, at);
      account?.control.observe(unserved, from, at);
    }
    const accountsOwn =
      account !== undefined &&
      (partition === undefined || account.control.out || (account.control.spreadAt(at) >= SPREAD && partition.control.unservedShare <= GAIN * account.control.unservedShare));
    for (const scope of [partition, account]) {
      if (scope === undefined || (unserved && (scope === account) !== accountsOwn)) continue;
      const turn = scope.control.answer(evidence, sentAt, at, waited || scope.waiting > 0);
      if (turn !== undefined) {
        announcer.announce(scope, turn === "out" ? "open" : "closed");
        // Whoever backs off after a failure here asks again now: it waits for the probe, or goes.
        scope.sleepers.wakeAll();
      }
      announcer.observe(scope, at);
    }
  };

  /**
   * A scope that served nothing while its oldest live attempt went unanswered too long answers nothing: every
   * attempt it has in flight is taken for lost, as a failure (five are it out), and leaves its window.
   */
  const takeLost = (scope: Scope, at: number): void => {
    if (!scope.silent(at)) return;
    for (const attempt of [...scope.live]) {
      attempt.lost = true;
      attempt.settle();
      learn("failed", attempt.sentAt, at, attempt.route, false);
    }
  };

  const onTimer = (scope: Scope): void => {
    if (disposed) return;
    const at = now();
    takeLost(scope, at);
    announcer.observe(scope, at);
    pump(scope, at);
  };

  /** The scope that decides for a partition key now: its account while the account serves nothing. */
  const decidingScope = (key: string): Scope | undefined => {
    const scope = registry.peek(key);
    const account = scope?.accountKey === undefined ? undefined : registry.peek(scope.accountKey);
    return account?.control.out === true ? account : scope;
  };

  const statusOf = (key: string): PartitionStatus => {
    const scope = disposed ? undefined : decidingScope(key);
    if (scope === undefined) return HEALTHY_PARTITION;
    const at = now();
    const state = scope.stateAt(at);
    const rate = scope.control.ratePerSecond;
    if (state === "closed" && rate === Infinity) return HEALTHY_PARTITION;
    const retryAfterInMs = Math.max(0, Math.ceil(Math.min(scope.nextSendAt(at), at + o.resetTimeoutInMs) - at));
    if (state !== "closed") return { state, available: state === "half_open" && !scope.probeOut, retryAfterInMs };
    return { state: "paced", available: retryAfterInMs === 0, retryAfterInMs, ratePerSecond: rate };
  };

  const scopesIn = (wanted: CircuitState): string[] => [...registry.values()].filter((scope) => scope.stateAt(now()) === wanted).map((scope) => scope.key);

  return {
    get size() {
      return registry.size;
    },
    admit,
    record,
    release(_address, admission) {
      if (disposed) return;
      if (admission instanceof Attempt) return admission.settle();
      if (!(admission instanceof Waiting)) return;
      const queue = admission.queue;
      admission.leave();
      admission.granted?.settle();
      if (queue !== undefined) pump(queue, now());
    },
    stateOf: (key) => registry.peek(key)?.stateAt(now()),
    openScopes: () => scopesIn("open"),
    halfOpenScopes: () => scopesIn("half_open"),
    refusesNow(address) {
      if (disposed || registry.size === 0) return false;
      const key = scopeKeyOf(address);
      return key !== undefined && decidingScope(key)?.control.out === true;
    },
    wakeOf(address) {
      if (disposed || registry.size === 0) return undefined;
      const { partition, account } = routeOf(address, now(), false);
      return eitherWake(partition?.sleepers, account?.sleepers);
    },
    statusOf,
    pacedScopes: () =>
      [...registry.values()]
        .filter(({ control }) => control.ratePerSecond !== Infinity && !control.out)
        .map((scope): PacedScope => ({ scope: scope.key, ratePerSecond: scope.control.ratePerSecond, level: scope.accountKey === undefined ? "account" : "partition" })),
    stateCounts() {
      const at = now();
      const counts: Record<CircuitState, number> = { closed: 0, open: 0, half_open: 0 };
      for (const scope of registry.values()) if (scope.control.troubled) counts[scope.stateAt(at)] += 1;
      return counts;
    },
    onTransition: (listener) => announcer.onTransition(listener),
    dispose() {
      if (disposed) return;
      disposed = true;
      for (const scope of registry.values()) scope.clear();
      registry.clear();
      announcer.clear();
    },
  };
}
