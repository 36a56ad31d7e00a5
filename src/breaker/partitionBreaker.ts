// The per-partition gate and its composition with the account gate: admit and record over one registry of
// troubled scopes, each attempt also taking its account's slot. Its interface is partitionBreakerInterface.ts;
// around it: the account gate (accountGate.ts), the circuit (circuit.ts), its announcements (circuitAnnouncer.ts),
// scope keys (scopeKeys.ts), the read-only queries (scopeQueries.ts), pacing (flow/).
import type { RequestAddress } from "../address/requestAddress.js";
import { logger } from "../logging/logger.js";
import type { AccountPacing } from "../flow/accountPacing.js";
import { PACED_RECHECK_IN_MS, Pacer, type PacedSlot } from "../flow/pacer.js";
import type { Admission, SendAdmission } from "./attemptGate.js";
import { SEND_NOW } from "./attemptGate.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { AccountGate, type AccountHeldScope } from "./accountGate.js";
import { ACCOUNT_THROTTLE_RESET_IN_MS, Circuit } from "./circuit.js";
import type { CircuitState } from "./circuitStateSource.js";
import { CircuitAnnouncer } from "./circuitAnnouncer.js";
import { createScopeKeyReader } from "./scopeKeys.js";
import { pacedScopesOf, statusOfScope, type QueriedScope } from "./scopeQueries.js";
import { isRebalancingOutcome } from "./isRebalancingOutcome.js";
import { resolvePartitionBreakerOptions, type PartitionBreakerOptions } from "./partitionBreakerOptions.js";
import { HEALTHY_PARTITION } from "./partitionStatus.js";
import type { PartitionBreaker } from "./partitionBreakerInterface.js";
import { createScopeRegistry } from "./scopeRegistry.js";
import { eitherWake, WakeList } from "../timing/wake.js";

export type { PartitionBreaker } from "./partitionBreakerInterface.js";

/**
 * A probe unreported for this long (or the reset period, if longer) was admitted but never sent
 * (its operation ended first) or is lost: another may go. Longer than a probe period, since a
 * probe into a partition that times out takes the service's timeout to answer.
 */
const PROBE_LOST_AFTER_IN_MS = 3_000;

/** What the breaker remembers about a scope that had trouble. */
interface ScopeState extends QueriedScope, AccountHeldScope {
  /** Made at the scope's second throttled answer within `forgetAfterInMs` (pacing on). */
  pacer: Pacer | undefined;
  lastFailureAt: number;
  lastThrottleAt: number;
  /**
   * From a first throttle until the pacer comes (undefined otherwise): when it came, and the attempts
   * admitted and answers served since. The pacer starts from them, as if it had been made at the first.
   */
  unpacedSince: number | undefined;
  unpacedSent: number;
  unpacedServed: number;
  /** The attempts waiting on this scope (its circuit, its paced slots), woken at once when the wait ends early. */
  waiters: WakeList | undefined;
}

/**
 * When an attempt's slot was reserved, handed back to `record`. A slot reserved before the
 * last cut was spaced at the old rate: its throttled answer is no news, so it cuts nothing.
 */
interface PacedTicket {
  reservedAt: number;
  /** The scope's slot, when the scope's pacer delayed it: it may come sooner (see {@link Pacer.delayOf}). */
  slot?: PacedSlot;
  /** The pacer that gave `slot`: one made since (the scope forgotten, or back from an outage) says nothing of it. */
  pacer?: Pacer;
  /** The account's slot and pacer, when the account's pacer delayed it too (the later of the two is the attempt's). */
  accountSlot?: PacedSlot;
  accountPacer?: Pacer;
  /**
   * When this admission took a half-open circuit's probe: confirming it must not ask the circuit
   * again (the probe out would refuse its own holder), and abandoning it gives the probe back.
   */
  probeAt?: number;
}

/** The probe an admission holds, if any. */
const probeOf = (admission: SendAdmission): number | undefined => (admission.ticket as PacedTicket | undefined)?.probeAt;

/**
 * Creates a {@link PartitionBreaker}. State is made per scope at its first rebalancing
 * failure (until then its attempts go out unwatched; while no scope has state, not even
 * the scope is read) and retired once its circuit is closed and it has had no failure for
 * `rollingWindowInMs` (and no throttled answer for `pacing.forgetAfterInMs`); at most
 * `maxScopes` live, idle ones swept after `idleTtlInMs` by one `unref()`ed timer.
 *
 * @example
 * const breaker = createPartitionBreaker({ service: "table" });
 * const policy = resilientRetryPolicy({ gate: breaker });
 * // ... on shutdown:
 * breaker.dispose();
 */
export function createPartitionBreaker(options: PartitionBreakerOptions = {}): PartitionBreaker {
  return createPartitionBreakerAt("", options);
}

/** {@link createPartitionBreaker} for options found at `path` (`circuitBreaker`): errors name their full path. */
export function createPartitionBreakerAt(path: string, options: PartitionBreakerOptions): PartitionBreaker {
  const o = resolvePartitionBreakerOptions(options, path);
  // While a probe is out its waiters are woken when it closes the circuit: the poll is only for a probe that fails.
  const halfOpenPollInMs = o.resetTimeoutInMs;
  const circuitConfig = {
    resetTimeoutInMs: o.resetTimeoutInMs,
    consecutiveFailures: o.consecutiveFailures,
    halfOpenPollInMs,
    probeLostAfterInMs: Math.max(o.resetTimeoutInMs, PROBE_LOST_AFTER_IN_MS),
  };
  const now = (): number => Date.now();
  const announcer = new CircuitAnnouncer(o.resetTimeoutInMs);
  const registry = createScopeRegistry<ScopeState>({
    maxEntries: o.maxScopes,
    idleTtlInMs: o.idleTtlInMs,
    // A scope with nothing left to remember goes back to costing nothing.
    isRetirable: (state) => {
      const at = now();
      const calm = state.circuit.stateAt(at) === "closed" && at - state.lastFailureAt >= o.rollingWindowInMs;
      return calm && (state.pacer === undefined || forgotten(state, at));
    },
  });
  let disposed = false;

  // The announcer's two calls, named as the gate below uses them.
  const announce = (state: ScopeState, to: CircuitState): void => announcer.announce(state, to);
  const observe = (state: ScopeState, at: number): CircuitState => announcer.observe(state, at);
  /** Accounts throttled as a whole. Its `accounts` map is read (for its size) on the success path: no call. */
  const accountGate = new AccountGate<ScopeState>(
    o.pacing,
    () => registry.values(),
    // Its account serves again: the circuit its throttle opened closes.
    (state, at) => {
      observe(state, at);
      const change = state.circuit.close(at);
      if (change !== undefined) announce(state, change.to);
      // What the partition's pacer learnt while its account was throttled says nothing about it now.
      state.pacer = undefined;
      state.waiters?.wakeAll();
    },
  );
  const { accounts } = accountGate;
  /** Scopes whose circuit reads `wanted` now (no timer per circuit: the registry is read when asked). */
  const scopesIn = (wanted: CircuitState): string[] => {
    const at = now();
    const keys: string[] = [];
    for (const state of registry.values()) if (observe(state, at) === wanted) keys.push(state.key);
    return keys;
  };

  const scopeKeyOf = createScopeKeyReader(o.getScope, o.service);

  const admit = (address: RequestAddress, remainingInMs: number, reserved?: SendAdmission): Admission => {
    if (disposed || (registry.size() === 0 && accounts.size === 0)) return reserved ?? SEND_NOW;
    const at = now();
    const key = scopeKeyOf(address);
    const state = key === undefined ? undefined : registry.touch(key);
    if (state === undefined) return reserved === undefined ? admitToAccount(address, at, remainingInMs, 0, key) : recheck(reserved, undefined, address, at, remainingInMs);
    const { circuit } = state;
    // Calm for forgetAfterInMs: what the pacer learnt is stale (statusOf and pacedScopes already say
    // healthy), so it goes now rather than when the sweep retires the scope, its queue with it.
    if (state.pacer !== undefined && forgotten(state, at)) dropPacer(state);
    const before = observe(state, at);
    // A paced slot confirmed by the probe's own holder, while the circuit still holds that probe: the
    // probe out is its own. A probe the circuit took for lost (or a circuit that has moved on) is asked anew.
    const heldProbe = reserved === undefined ? undefined : probeOf(reserved);
    if (heldProbe !== undefined && circuit.holdsProbe(heldProbe)) return reserved as SendAdmission;
    if (!circuit.admit(at)) {
      // Half-open: retryAfterInMs is a poll while the probe is out, and the circuit may admit sooner (its waiters are woken then).
      const retryAfterInMs = circuit.retryAfterInMs(at);
      return { decision: "refuse", reason: "circuit-open", scope: state.key, retryAfterInMs, probeOut: before === "half_open", wake: waitersOf(state) };
    }
    // Confirmed: the slot is the caller's. Admitted half-open, it now holds the circuit's new probe.
    if (reserved !== undefined) return before === "closed" ? recheck(reserved, state, address, at, remainingInMs) : { ...reserved, delayInMs: 0, ticket: { ...(reserved.ticket as PacedTicket), probeAt: at } };
    // Admitted half-open: this attempt is the probe.
    const probeAt = before === "closed" ? undefined : at;
    // A probe never queues behind its partition's paced queue: the queue was made before the circuit opened, its
    // waiters are refused by the circuit until the probe answers, and behind them the probe would hold the circuit
    // half-open (every other attempt refused) for the queue's length.
    const slot = state.pacer === undefined || probeAt !== undefined ? 0 : state.pacer.reserve(at, remainingInMs);
    if (typeof slot !== "number") return { decision: "refuse", reason: "paced", scope: state.key, retryAfterInMs: slot.refusedFor };
    if (state.unpacedSince !== undefined) state.unpacedSent += 1;
    if (probeAt === undefined) return admitToAccount(address, at, remainingInMs, slot, state.key, state);
    // A probe never queues behind a paced account: reserved far out at the account's throttled rate, it would
    // hold its circuit half-open (every other attempt refused) for that long after the account serves again.
    const admission = admitToAccount(address, at, Math.min(remainingInMs, halfOpenPollInMs), slot, state.key, state, probeAt);
    if (admission.decision === "send") return admission;
    circuit.returnProbe(at, probeAt);
    return { decision: "refuse", reason: "circuit-open", scope: state.key, retryAfterInMs: Math.min(admission.retryAfterInMs, halfOpenPollInMs), wake: waitersOf(state) };
  };

  /** The account's slot too, when the account is paced; the attempt waits for the later of the two. */
  const admitToAccount = (
    address: RequestAddress,
    at: number,
    remainingInMs: number,
    scopeDelayInMs: number,
    scope: string | undefined,
    state?: ScopeState,
    probeAt?: number,
  ): Admission => {
    const account = accountGate.engaged(address, at);
    const accountDelay = account?.pacer.reserve(at, remainingInMs);
    if (typeof accountDelay === "object") {
      return { decision: "refuse", reason: "paced", scope: scope ?? "account", retryAfterInMs: accountDelay.refusedFor };
    }
    const pacer = state?.pacer;
    if (pacer === undefined && account === undefined) {
      // An unpaced probe still carries its ticket, so that abandoning it gives the probe back.
      return probeAt === undefined ? SEND_NOW : { decision: "send", delayInMs: 0, ticket: { reservedAt: -Infinity, probeAt } satisfies PacedTicket };
    }
    const accountDelayInMs = accountDelay ?? 0;
    const delayInMs = Math.max(scopeDelayInMs, accountDelayInMs);
    // A probe's slot is not asked about again (it holds its circuit half-open): only other attempts' slots may come sooner.
    if (delayInMs === 0 || probeAt !== undefined) return { decision: "send", delayInMs, ticket: { reservedAt: at, probeAt } satisfies PacedTicket, paced: true };
    const scopeWaits = scopeDelayInMs > 0 && state !== undefined;
    const accountWaits = accountDelayInMs > 0 && account !== undefined;
    const ticket: PacedTicket = {
      reservedAt: at,
      slot: scopeWaits ? pacer?.lastSlot : undefined,
      pacer: scopeWaits ? pacer : undefined,
      accountSlot: accountWaits ? account.pacer.lastSlot : undefined,
      accountPacer: accountWaits ? account.pacer : undefined,
    };
    const wake = eitherWake(scopeWaits ? waitersOf(state) : undefined, accountWaits ? account.waiters : undefined);
    return { decision: "send", delayInMs: Math.min(delayInMs, PACED_RECHECK_IN_MS), ticket, paced: true, wake };
  };

  /**
   * A paced slot asked about again: come (`reserved`, confirmed), or still ahead (the rest of the
   * wait, asked again within PACED_RECHECK_IN_MS: the slot moves earlier when the scope's or the
   * account's rate grows), or further off than the caller may now wait. A slot says nothing any
   * more when the pacer that gave it was let go, replaced or forgotten.
   */
  const recheck = (reserved: SendAdmission, state: ScopeState | undefined, address: RequestAddress, at: number, remainingInMs: number): Admission => {
    const ticket = reserved.ticket as PacedTicket | undefined;
    if (ticket === undefined || (ticket.slot === undefined && ticket.accountSlot === undefined)) return reserved;
    const { slot, pacer, accountSlot, accountPacer } = ticket;
    const scopeInMs = slot !== undefined && pacer !== undefined && state?.pacer === pacer ? pacer.delayOf(slot, at) : 0;
    const accountStill = accountSlot !== undefined && accountPacer !== undefined && accountGate.engaged(address, at)?.pacer === accountPacer;
    const accountInMs = accountStill ? accountPacer.delayOf(accountSlot, at) : 0;
    const delayInMs = Math.max(scopeInMs, accountInMs);
    if (delayInMs <= 0) return reserved;
    if (delayInMs > remainingInMs) return { decision: "refuse", reason: "paced", scope: state?.key ?? "account", retryAfterInMs: delayInMs };
    return { ...reserved, delayInMs: Math.min(delayInMs, PACED_RECHECK_IN_MS) };
  };

  /** The scope's waiters, made when the first one waits. */
  const waitersOf = (state: ScopeState): WakeList => (state.waiters ??= new WakeList());

  /** The scope's pacer goes (forgotten): its waiters' slots say nothing any more, so they ask again now. */
  const dropPacer = (state: ScopeState): void => {
    state.pacer = undefined;
    state.waiters?.wakeAll();
  };

  const abandon = (address: RequestAddress, admission: SendAdmission): void => {
    const probeAt = probeOf(admission);
    if (disposed || probeAt === undefined) return;
    const key = scopeKeyOf(address);
    const state = key === undefined ? undefined : registry.peek(key);
    state?.circuit.returnProbe(now(), probeAt);
  };

  const record = (address: RequestAddress, admission: SendAdmission, result: AttemptResult): void => {
    if (disposed) return;
    const cls = result.outcomeClass;
    const failed = isRebalancingOutcome(cls);
    if (!failed && registry.size() === 0 && accounts.size === 0) return;
    const at = now();
    const reservedAt = (admission.ticket as PacedTicket | undefined)?.reservedAt ?? -Infinity;
    const throttled = o.pacing !== undefined && (cls === "throttled" || cls === "timeout");
    const served = !failed && cls !== "aborted";
    const key = scopeKeyOf(address);
    const known = key === undefined ? undefined : registry.peek(key);
    let throttledAccount: AccountPacing | undefined;
    if (throttled) throttledAccount = accountGate.throttled(address, key, known?.lastThrottleAt ?? -Infinity, reservedAt, at);
    else if (served) accountGate.served(address, at);
    if (key === undefined) return;
    const state = failed ? (known === undefined ? addState(key, address) : registry.touch(key)) : known;
    if (state === undefined) return;
    const before = observe(state, at);
    // The account throttled as a whole, not this partition moving: if this opens the circuit, it is probed again
    // soon, and the account's first success anywhere closes it.
    const resetInMs = throttledAccount !== undefined ? Math.min(ACCOUNT_THROTTLE_RESET_IN_MS, o.resetTimeoutInMs) : o.resetTimeoutInMs;
    const change = state.circuit.record(cls === "aborted" ? "none" : failed ? "failed" : "served", at, resetInMs);
    if (change !== undefined) announce(state, change.to);
    if (change?.to === "open") accountGate.hold(state, throttledAccount, address);
    else if (change?.to === "closed") state.heldBy = undefined;
    // Back from serving nothing (a move): what the pacer learnt about it then says nothing about now.
    if (change?.from === "half_open" && change.to === "closed") state.pacer = undefined;
    // The served rate is the pacer's floor, and its successes drive the slow start; the first after an outage lets the queue go.
    const letOut = served && state.pacer !== undefined && state.pacer.rate.served(at);
    if (served && state.pacer === undefined && state.unpacedSince !== undefined) state.unpacedServed += 1;
    // The circuit closed, or the queue was let out: every waiter asks again now, not at its poll. Opened: every
    // waiter (a backoff, a paced slot) asks again too, and waits for the probe instead: the circuit now says when
    // the partition is tried again, so that operations all backing off still probe it in time.
    if (change !== undefined || letOut) state.waiters?.wakeAll();
    if (!failed) return;
    state.lastFailureAt = at;
    // Throttles while the circuit is not closed (probes into an outage) teach the pacer nothing.
    if (!throttled || o.pacing === undefined || before !== "closed") return;
    const throttledLately = at - state.lastThrottleAt < o.pacing.forgetAfterInMs;
    state.lastThrottleAt = at;
    // A partition's first throttle is no evidence (a growing table's new ranges are each hot once): its pacer
    // comes with the second. Split-once partitions then cost no pacer (docs/benchmarks.md, "A table being split"),
    // only three counts. The pacer starts from what they measured, so that its first cut need not wait for a
    // new half second of sends (a partition timing out has meanwhile been sent its circuit's worth of attempts).
    if (state.pacer === undefined && !throttledLately) {
      state.unpacedSince = at;
      state.unpacedSent = 0;
      state.unpacedServed = 0;
      return;
    }
    if (state.pacer === undefined) {
      const since = state.unpacedSince;
      state.pacer = new Pacer(at, o.pacing, since === undefined ? undefined : { since, sent: state.unpacedSent, served: state.unpacedServed });
      state.unpacedSince = undefined;
    }
    // An attempt admitted before the scope had a pacer counts as reserved before any cut.
    if (state.pacer.rate.throttled(reservedAt, at)) {
      logger.info(`Partition scope "${state.key}" is throttled: pacing it at ${state.pacer.rate.rateAt(at).toFixed(1)} attempts/s.`);
    }
  };

  /** Calm for `forgetAfterInMs`: no longer paced, whether or not the sweep has come by yet. */
  const forgotten = (state: ScopeState, at: number): boolean => o.pacing === undefined || at - state.lastThrottleAt >= o.pacing.forgetAfterInMs;

  const addState = (key: string, address: RequestAddress): ScopeState => {
    const at = now();
    const state: ScopeState = {
      key,
      service: address.service ?? o.service ?? "table",
      circuit: new Circuit(at, circuitConfig),
      announced: "closed",
      pacer: undefined,
      heldBy: undefined,
      lastFailureAt: at,
      lastThrottleAt: -Infinity,
      unpacedSince: undefined,
      unpacedSent: 0,
      unpacedServed: 0,
      waiters: undefined,
    };
    registry.add(key, state);
    return state;
  };

  return {
    get size() {
      return registry.size();
    },
    admit,
    record,
    abandon,
    stateOf(scope) {
      const state = registry.peek(scope);
      return state === undefined ? undefined : observe(state, now());
    },
    openScopes() {
      return scopesIn("open");
    },
    halfOpenScopes() {
      return scopesIn("half_open");
    },
    refusesNow(address) {
      if (disposed || (registry.size() === 0 && accounts.size === 0)) return false;
      const key = scopeKeyOf(address);
      const circuit = key === undefined ? undefined : registry.peek(key)?.circuit;
      return circuit !== undefined && circuit.refuses(now());
    },
    wakeOf(address) {
      if (disposed || registry.size() === 0) return undefined;
      const key = scopeKeyOf(address);
      const state = key === undefined ? undefined : registry.peek(key);
      return state === undefined ? undefined : waitersOf(state);
    },
    statusOf(scope) {
      if (disposed) return HEALTHY_PARTITION;
      const state = registry.peek(scope);
      if (state === undefined) return HEALTHY_PARTITION;
      const at = now();
      return statusOfScope(state, at, observe(state, at), forgotten);
    },
    pacedScopes() {
      const at = now();
      return accountGate.pacedAccounts(at, pacedScopesOf(registry.values(), at, forgotten));
    },
    stateCounts() {
      const at = now();
      const counts: Record<CircuitState, number> = { closed: 0, open: 0, half_open: 0 };
      for (const state of registry.values()) counts[observe(state, at)] += 1;
      return counts;
    },
    onTransition(listener) {
      return announcer.onTransition(listener);
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      registry.clear();
      accountGate.clear();
      announcer.clear();
    },
  };
}
