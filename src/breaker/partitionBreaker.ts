// The per-partition gate, carrying out what its scopes' controllers decide (docs/flow-control.md); its interface is partitionBreakerInterface.ts.
import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { EVIDENCE_OF, isAccountsEvidence, SPREAD, type ControllerSettings, type Evidence } from "../flow/scopeController.js";
import { eitherWake } from "../timing/wake.js";
import { SEND_NOW, type Admission, type AdmissionRequest, type Send } from "./attemptGate.js";
import { CircuitAnnouncer } from "./circuitAnnouncer.js";
import { resolvePartitionBreakerOptions, type PartitionBreakerOptions } from "./partitionBreakerOptions.js";
import { HEALTHY_PARTITION, type CircuitState, type PacedScope, type PartitionBreaker, type PartitionStatus } from "./partitionBreakerInterface.js";
import { Attempt, Scope, Waiting, type Route } from "./scope.js";
import { accountKeyOf, createScopeKeyReader, type ScopeKeys } from "./scopeKeys.js";
import { ScopeRegistry } from "./scopeRegistry.js";

export type { PartitionBreaker } from "./partitionBreakerInterface.js";

/**
 * Creates a {@link PartitionBreaker}. It holds no state until a scope's first unserved answer, and at most
 * `maxScopes` scopes; one `unref()`ed timer forgets those idle for `idleTtlInMs` or with nothing left to limit.
 *
 * @example
 * const breaker = createPartitionBreaker({ service: "table" });
 * const policy = resilientRetryPolicy({ gate: breaker });
 * // ... on shutdown:
 * breaker.dispose();
 */
export function createPartitionBreaker(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const o = resolvePartitionBreakerOptions(options, "");
  const partitionSettings: ControllerSettings = { probeIntervalInMs: o.resetTimeoutInMs, unservedToOut: o.consecutiveFailures, pacing: o.pacing };
  // One answer of an account tells for at least SPREAD partitions: it is probed as often as they would be together.
  const accountSettings: ControllerSettings = { ...partitionSettings, probeIntervalInMs: o.resetTimeoutInMs / SPREAD };
  // Monotonic: a step of the wall clock must neither take every attempt for lost nor hold every turn back.
  const now = (): number => performance.now();
  const announcer = new CircuitAnnouncer();
  // A scope forgotten with waiters (the bound reached) wakes them: they ask again, under a scope made anew.
  const registry = new ScopeRegistry<Scope>(o.maxScopes, o.idleTtlInMs, (scope) => scope.isRetirable(), (scope) => scope.clear());
  const keysOf = createScopeKeyReader(o.getScope, o.service);
  let disposed = false;

  /** The scopes an attempt on `keys` goes under; made where missing with `trouble`, and a partition's while its account has state. */
  const routeOf = ({ partition: key, account: accountKey, service }: ScopeKeys, at: number, trouble: boolean): Route => {
    const held = (scopeKey: string, make: boolean, scope: () => Scope): Scope | undefined => registry.touch(scopeKey, at) ?? (make ? registry.add(scopeKey, scope(), at) : undefined);
    const account = accountKey === undefined ? undefined : held(accountKey, trouble, () => new Scope(accountKey, service, undefined, at, accountSettings));
    const partition = held(key, trouble || account !== undefined, () => new Scope(key, service, accountKey, at, partitionSettings, account?.control.fastestInMs));
    return { from: key, partition, account };
  };

  /** The scopes whose limits an attempt on `route` keeps: while its account serves nothing, the account alone (its probes answer for every partition). */
  const gatesOf = ({ partition, account }: Route): Scope[] => {
    if (account === undefined) return partition === undefined ? [] : [partition];
    return partition === undefined || account.control.out ? [account] : [partition, account];
  };

  /** Whether `scope` may let an attempt go now: a send is due, and it is not silent past its loss time (then it is checked first). */
  const mayGo = (scope: Scope, at: number): boolean => scope.due(at) && scope.lostAt() > at;

  /** Lets an attempt go on `route` now: counted in flight under its scopes, a send taken from each of its `gates`. */
  const send = (route: Route, gates: readonly Scope[], at: number, waited: boolean): Attempt => {
    const attempt = new Attempt(at, route, gates, waited);
    for (const scope of [route.partition, route.account]) scope?.live.add(attempt);
    for (const gate of gates) {
      gate.control.sent(at);
      announcer.observe(gate, at);
    }
    return attempt;
  };

  const admit = (address: RequestAddress, ask: AdmissionRequest): Admission => {
    if (disposed || registry.size === 0) return SEND_NOW;
    const waited = ask.waited instanceof Waiting ? ask.waited : undefined;
    if (waited?.granted !== undefined) return waited.granted;
    const keys = keysOf(address);
    if (keys === undefined) return SEND_NOW;
    const at = now();
    const route = routeOf(keys, at, false);
    if (route.partition === undefined && route.account === undefined) return SEND_NOW;
    for (const scope of [route.partition, route.account]) {
      if (scope === undefined) continue;
      if (scope.lostAt() <= at) scope.checkSoon(onCheck);
      // An operation's first ask: what the scope's callers ask, whether or not it goes now.
      if (!ask.retry && waited === undefined) scope.control.asked(at);
    }
    // A newcomer goes when a send is due (the newest first); one asking again, when it is also next in its queue.
    const gates = gatesOf(route);
    const blocked = gates.find((gate) => !mayGo(gate, at) || (waited !== undefined && gate.waiting > 0 && gate.next !== waited));
    if (blocked === undefined) {
      waited?.leave();
      const attempt = send(route, gates, at, waited !== undefined);
      for (const gate of gates) pump(gate, at);
      return attempt;
    }
    return wait(blocked, route, at, ask, waited);
  };

  /** Queued for `gate`'s next send, or refused when that is further off than the caller may wait. */
  const wait = (gate: Scope, route: Route, at: number, ask: AdmissionRequest, waited: Waiting | undefined): Admission => {
    const out = gate.control.out;
    // Until the next send, or the next probe when out; with the window full, until an answer or a loss frees it.
    const untilInMs = Math.max(0, Math.min(gate.nextSendAt(at), gate.lostAt()) - at);
    waited?.leave();
    // While a probe is out, its answer may bring the scope back at any moment: the caller waits what it may for it.
    const probeAnswers = out && gate.probesOut > 0 && ask.queueForInMs > 0;
    if (untilInMs > ask.queueForInMs && !probeAnswers) return { decision: "refuse", reason: out ? "circuit-open" : "paced", scope: gate.key, retryAfterInMs: Math.ceil(untilInMs) };
    const waiting = new Waiting(route, out ? "circuit" : "pacing", Math.max(1, Math.min(untilInMs, ask.queueForInMs)), waited?.since ?? at);
    gate.enqueue(waiting);
    pump(gate, at);
    return waiting;
  };

  /** Grants `scope`'s waiters their turns while it may let attempts go (docs/flow-control.md, "Turns"), then sets its timer. */
  const pump = (scope: Scope, at: number): void => {
    for (let next = scope.next; next !== undefined && mayGo(scope, at); next = scope.next) {
      next.leave();
      const gates = gatesOf(next.route);
      const blocked = gates.find((gate) => gate !== scope && !mayGo(gate, at));
      if (blocked === undefined) {
        next.grant(send(next.route, gates, at, true));
      } else {
        blocked.enqueue(next);
        blocked.schedule(at, onCheck);
      }
    }
    scope.schedule(at, onCheck);
  };

  const record = (address: RequestAddress, sent: Send, result: AttemptResult): void => {
    if (disposed) return;
    const evidence = EVIDENCE_OF[result.outcomeClass];
    if (sent instanceof Attempt && isHeld(sent.route)) {
      const at = now();
      // Taken for lost already: only a success still says something, and its round trip is unknown.
      const live = sent.settle();
      if (evidence === "served" || (evidence !== undefined && live)) learn(evidence, live ? sent.sentAt : -Infinity, at, sent.route, sent.waited);
      return pumpRoute(sent.route, at);
    }
    if (sent instanceof Attempt) sent.settle();
    // Sent unwatched, or under scopes forgotten since: while nothing is watched, only a first trouble makes state (the success path ends here).
    const unserved = evidence === "throttled" || evidence === "failed";
    if (evidence === undefined || (!unserved && registry.size === 0)) return;
    const keys = keysOf(address);
    const at = now();
    if (keys !== undefined) learn(evidence, -Infinity, at, routeOf(keys, at, unserved), false);
  };

  /** Whether the registry still holds the scopes `route` was sent under. */
  const isHeld = ({ from, partition, account }: Route): boolean =>
    (partition === undefined || registry.peek(from) === partition) && (account === undefined || registry.peek(account.key) === account);

  const pumpRoute = (route: Route, at: number): void => {
    if (route.partition !== undefined) pump(route.partition, at);
    if (route.account !== undefined) pump(route.account, at);
  };

  /** Hands an answer to the scopes whose evidence it is: a served one to both; an unserved one as {@link isAccountsEvidence} says. */
  const learn = (evidence: Evidence, sentAt: number, at: number, route: Route, limited: boolean): void => {
    const { from, partition, account } = route;
    const unserved = evidence === "throttled" || evidence === "failed";
    // An answer that is no success says neither that the scope serves nor that it fails.
    if (evidence !== "answered") {
      partition?.control.observe(unserved, from, at);
      account?.control.observe(unserved, from, at);
    }
    const accountsOwn = unserved && account !== undefined && isAccountsEvidence(partition?.control, account.control, at);
    for (const scope of [partition, account]) {
      if (scope === undefined || (unserved && (scope === account) !== accountsOwn)) continue;
      const turn = scope.control.answer(evidence, sentAt, at, limited || scope.waiting > 0);
      if (turn !== undefined) {
        announcer.announce(scope, turn === "out" ? "open" : "closed");
        if (turn === "out" && scope === account) for (const other of registry.values()) if (other.accountKey === account.key) other.control.forgetLimit(at);
        // Whoever backs off after a failure here asks again now: it waits for the probe, or goes.
        scope.sleepers.wakeAll();
      }
      announcer.observe(scope, at);
    }
  };

  /** Silent past its loss time, every attempt `scope` has in flight is taken for lost, as a failure (docs/flow-control.md, "Each kind of answer"). */
  const onCheck = (scope: Scope): void => {
    if (disposed) return;
    const at = now();
    if (scope.lostAt() <= at) {
      for (const attempt of [...scope.live]) {
        attempt.settle();
        learn("failed", attempt.sentAt, at, attempt.route, false);
      }
    }
    announcer.observe(scope, at);
    pump(scope, at);
  };

  /** The scopes that decide for a partition key now (the account alone while it serves nothing), as the registry holds them. */
  const gatesOfKey = (key: string): Scope[] => {
    const partition = registry.peek(key);
    const accountKey = partition?.accountKey ?? accountKeyOf(key);
    return gatesOf({ from: key, partition, account: accountKey === undefined ? undefined : registry.peek(accountKey) });
  };

  const statusOf = (key: string): PartitionStatus => {
    if (disposed) return HEALTHY_PARTITION;
    const gates = gatesOfKey(key);
    const at = now();
    const out = gates.find((gate) => gate.control.out);
    const paced = gates.filter((gate) => gate.control.ratePerSecond !== Infinity);
    if (out === undefined && paced.length === 0) return HEALTHY_PARTITION;
    const nextAt = Math.max(...gates.map((gate) => gate.nextSendAt(at)));
    const retryAfterInMs = Math.max(0, Math.ceil(Math.min(nextAt, at + o.resetTimeoutInMs) - at));
    if (out !== undefined) {
      const state = out.stateAt(at) as "open" | "half_open";
      return { state, available: state === "half_open" && out.probesOut === 0, retryAfterInMs };
    }
    return { state: "paced", available: retryAfterInMs === 0, retryAfterInMs, ratePerSecond: Math.min(...paced.map((gate) => gate.control.ratePerSecond)) };
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
      const waiting = admission instanceof Waiting ? admission : undefined;
      const queue = waiting?.queue;
      waiting?.leave();
      // A turn given back frees its place in the window: the queue goes on at once.
      const attempt = waiting?.granted ?? (admission instanceof Attempt ? admission : undefined);
      const at = now();
      if (attempt?.settle() === true) pumpRoute(attempt.route, at);
      if (queue !== undefined) pump(queue, at);
    },
    stateOf: (key) => registry.peek(key)?.stateAt(now()),
    openScopes: () => scopesIn("open"),
    halfOpenScopes: () => scopesIn("half_open"),
    refusesNow(address) {
      if (disposed || registry.size === 0) return false;
      const keys = keysOf(address);
      return keys !== undefined && gatesOfKey(keys.partition).some((gate) => gate.control.out);
    },
    wakeOf(address) {
      if (disposed || registry.size === 0) return undefined;
      const keys = keysOf(address);
      if (keys === undefined) return undefined;
      return eitherWake(registry.peek(keys.partition)?.sleepers, keys.account === undefined ? undefined : registry.peek(keys.account)?.sleepers);
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
