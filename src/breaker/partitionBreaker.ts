// The per-partition gate and its composition with the account gate: admit and record over one registry of
// troubled scopes (troubledScope.ts, each the owner of its circuit, pacer and waiters), each attempt also taking
// its account's slot. Its interface is partitionBreakerInterface.ts; around it: the account gate (accountGate.ts),
// the announcements (circuitAnnouncer.ts), scope keys (scopeKeys.ts), pacing (flow/).
import type { RequestAddress } from "../address/requestAddress.js";
import type { AccountPacing } from "../flow/accountPacing.js";
import { PACED_RECHECK_IN_MS, type Pacer, type PacedSlot } from "../flow/pacer.js";
import { SEND_NOW, type Admission, type SendAdmission } from "./attemptGate.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { AccountGate } from "./accountGate.js";
import { ACCOUNT_PROBE_IN_MS } from "./circuit.js";
import type { CircuitState } from "./circuitStateSource.js";
import { CircuitAnnouncer } from "./circuitAnnouncer.js";
import { createScopeKeyReader } from "./scopeKeys.js";
import { isRebalancingOutcome } from "./isRebalancingOutcome.js";
import { resolvePartitionBreakerOptions, type PartitionBreakerOptions } from "./partitionBreakerOptions.js";
import { HEALTHY_PARTITION } from "./partitionStatus.js";
import type { PartitionBreaker } from "./partitionBreakerInterface.js";
import { createScopeRegistry } from "./scopeRegistry.js";
import { eitherWake } from "../timing/wake.js";
import type { PacedScope } from "../flow/pacedScope.js";
import { TroubledScope, type Evidence } from "./troubledScope.js";
import { withRecoveryWindows } from "./recoveryWindow.js";

export type { PartitionBreaker } from "./partitionBreakerInterface.js";

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
  const o = resolvePartitionBreakerOptions(options, "");
  // While a probe is out its waiters are woken when it closes the circuit: the poll is only for a probe that fails.
  const halfOpenPollInMs = o.resetTimeoutInMs;
  const settings = {
    circuit: {
      resetTimeoutInMs: o.resetTimeoutInMs,
      consecutiveFailures: o.consecutiveFailures,
      halfOpenPollInMs,
      // Probes go at a fixed rate whether or not the last has answered: a probe into a partition that times out
      // answers only after the service's timeout, and one after its return would be seen that much later.
      probeLostAfterInMs: o.resetTimeoutInMs,
    },
    pacing: o.pacing,
    rollingWindowInMs: o.rollingWindowInMs,
  };
  const now = (): number => Date.now();
  const announcer = new CircuitAnnouncer(o.resetTimeoutInMs);
  const registry = createScopeRegistry<TroubledScope>({
    maxEntries: o.maxScopes,
    idleTtlInMs: o.idleTtlInMs,
    // A scope with nothing left to remember goes back to costing nothing.
    isRetirable: (scope) => scope.isRetirable(now()),
  });
  let disposed = false;

  /** Accounts out or throttled as a whole. Its `accounts` map is read (for its size) on the success path, which tells it only the time. */
  const accountGate = new AccountGate<TroubledScope>(
    o.pacing,
    o.consecutiveFailures,
    () => registry.values(),
    // Its account serves again: the circuit its throttle opened closes.
    (scope, at) => {
      announcer.observe(scope, at);
      const change = scope.release(at);
      if (change !== undefined) announcer.announce(scope, change.to);
    },
  );
  const scopeKeyOf = createScopeKeyReader(o.getScope, o.service);
  const quiet = (): boolean => disposed || (registry.size() === 0 && accountGate.accounts.size === 0);

  const admit = (address: RequestAddress, remainingInMs: number, reserved?: SendAdmission): Admission => {
    if (quiet()) return reserved ?? SEND_NOW;
    const at = now();
    const key = scopeKeyOf(address);
    const scope = key === undefined ? undefined : registry.touch(key);
    if (scope === undefined) return reserved === undefined ? admitToAccount(address, at, remainingInMs, 0, key) : recheck(reserved, undefined, address, at, remainingInMs);
    // Open → half-open comes with time: it takes effect, and is announced, when an attempt meets it.
    const before = announcer.observe(scope, at);
    // A paced slot confirmed by the probe's own holder, while the circuit still holds that probe: the
    // probe out is its own. A probe the circuit took for lost (or a circuit that has moved on) is asked anew.
    const heldProbe = reserved === undefined ? undefined : probeOf(reserved);
    if (heldProbe !== undefined && scope.holdsProbe(heldProbe)) return reserved as SendAdmission;
    // A circuit its account holds probes in turn with the account's others: one answer tells for all.
    const heldBy = before === "half_open" && !scope.refuses(at) ? scope.heldBy : undefined;
    const probeInMs = heldBy === undefined ? 0 : accountGate.takeProbe(heldBy, at);
    if (probeInMs > 0) return { decision: "refuse", reason: "circuit-open", scope: scope.key, retryAfterInMs: Math.max(probeInMs, halfOpenPollInMs), probeOut: true, wake: scope.waiters };
    if (!scope.admit(at)) {
      // Half-open: retryAfterInMs is a poll while the probe is out, and the circuit may admit sooner (its waiters are woken then).
      return { decision: "refuse", reason: "circuit-open", scope: key as string, retryAfterInMs: scope.retryAfterInMs(at), probeOut: before === "half_open", wake: scope.waiters };
    }
    // Confirmed: the slot is the caller's. Admitted half-open, it now holds the circuit's new probe.
    if (reserved !== undefined) return before === "closed" ? recheck(reserved, scope, address, at, remainingInMs) : { ...reserved, delayInMs: 0, ticket: { ...(reserved.ticket as PacedTicket), probeAt: at }, probe: true };
    // Admitted half-open: this attempt is the probe.
    const probeAt = before === "closed" ? undefined : at;
    const slot = scope.reserve(at, remainingInMs, probeAt !== undefined);
    if (typeof slot !== "number") return { decision: "refuse", reason: "paced", scope: scope.key, retryAfterInMs: slot.refusedFor };
    if (probeAt === undefined) return admitToAccount(address, at, remainingInMs, slot, scope.key, scope);
    // Once per ACCOUNT_PROBE_IN_MS, not at the account pacer's rate (0.5 s apart by a 3 s throttle's end); reserved now, its answer still tells the pacer.
    if (heldBy !== undefined) return { decision: "send", delayInMs: 0, ticket: { reservedAt: at, probeAt } satisfies PacedTicket, probe: true };
    // A probe never queues behind a paced account: reserved far out at the account's throttled rate, it would
    // hold its circuit half-open (every other attempt refused) for that long after the account serves again.
    const admission = admitToAccount(address, at, Math.min(remainingInMs, halfOpenPollInMs), slot, scope.key, scope, probeAt);
    if (admission.decision === "send") return admission;
    returnProbe(scope, at, probeAt);
    return { decision: "refuse", reason: "circuit-open", scope: scope.key, retryAfterInMs: Math.min(admission.retryAfterInMs, halfOpenPollInMs), wake: scope.waiters };
  };

  /** The account's slot too, when the account is paced; the attempt waits for the later of the two. */
  const admitToAccount = (
    address: RequestAddress,
    at: number,
    remainingInMs: number,
    scopeDelayInMs: number,
    key: string | undefined,
    scope?: TroubledScope,
    probeAt?: number,
  ): Admission => {
    const account = accountGate.engaged(address, at);
    const accountDelay = account?.pacer.reserve(at, remainingInMs);
    if (typeof accountDelay === "object") return { decision: "refuse", reason: "paced", scope: key ?? "account", retryAfterInMs: accountDelay.refusedFor };
    const pacer = scope?.pacerAt(at);
    if (pacer === undefined && account === undefined) {
      // An unpaced probe still carries its ticket, so that abandoning it gives the probe back.
      return probeAt === undefined ? SEND_NOW : { decision: "send", delayInMs: 0, ticket: { reservedAt: -Infinity, probeAt } satisfies PacedTicket, probe: true };
    }
    const accountDelayInMs = accountDelay ?? 0;
    const delayInMs = Math.max(scopeDelayInMs, accountDelayInMs);
    // A probe's slot is not asked about again (it holds its circuit half-open): only other attempts' slots may come sooner.
    if (delayInMs === 0 || probeAt !== undefined) return { decision: "send", delayInMs, ticket: { reservedAt: at, probeAt } satisfies PacedTicket, paced: true, probe: probeAt !== undefined || undefined };
    const scopeWaits = scopeDelayInMs > 0 ? scope : undefined;
    const accountWaits = accountDelayInMs > 0 ? account : undefined;
    const ticket: PacedTicket = {
      reservedAt: at,
      slot: scopeWaits === undefined ? undefined : pacer?.lastSlot,
      pacer: scopeWaits === undefined ? undefined : pacer,
      accountSlot: accountWaits?.pacer.lastSlot,
      accountPacer: accountWaits?.pacer,
    };
    const wake = eitherWake(scopeWaits?.waiters, accountWaits?.waiters);
    return { decision: "send", delayInMs: Math.min(delayInMs, PACED_RECHECK_IN_MS), ticket, paced: true, wake };
  };

  /**
   * A paced slot asked about again: come (`reserved`, confirmed), or still ahead (the rest of the
   * wait, asked again within PACED_RECHECK_IN_MS: the slot moves earlier when the scope's or the
   * account's rate grows), or further off than the caller may now wait. A slot says nothing any
   * more when the pacer that gave it was let go, replaced or forgotten.
   */
  const recheck = (reserved: SendAdmission, scope: TroubledScope | undefined, address: RequestAddress, at: number, remainingInMs: number): Admission => {
    const ticket = reserved.ticket as PacedTicket | undefined;
    if (ticket === undefined || (ticket.slot === undefined && ticket.accountSlot === undefined)) return reserved;
    const { slot, pacer, accountSlot, accountPacer } = ticket;
    const scopeInMs = slot !== undefined && pacer !== undefined && scope !== undefined ? scope.delayOf(pacer, slot, at) : 0;
    const accountStill = accountSlot !== undefined && accountPacer !== undefined && accountGate.engaged(address, at)?.pacer === accountPacer;
    const delayInMs = Math.max(scopeInMs, accountStill ? accountPacer.delayOf(accountSlot, at) : 0);
    if (delayInMs <= 0) return reserved;
    if (delayInMs > remainingInMs) return { decision: "refuse", reason: "paced", scope: scope?.key ?? "account", retryAfterInMs: delayInMs };
    return { ...reserved, delayInMs: Math.min(delayInMs, PACED_RECHECK_IN_MS) };
  };

  const abandon = (address: RequestAddress, admission: SendAdmission): void => {
    const probeAt = probeOf(admission);
    if (disposed || probeAt === undefined) return;
    const key = scopeKeyOf(address);
    const scope = key === undefined ? undefined : registry.peek(key);
    if (scope !== undefined) returnProbe(scope, now(), probeAt);
  };

  /** A probe admitted but not sent goes back to its circuit, and to its account when the account holds the circuit. */
  const returnProbe = (scope: TroubledScope, at: number, probeAt: number): void => {
    scope.returnProbe(at, probeAt);
    if (scope.heldBy !== undefined) accountGate.probeReturned(scope.heldBy);
  };

  const record = (address: RequestAddress, admission: SendAdmission, result: AttemptResult): void => {
    if (disposed) return;
    const cls = result.outcomeClass;
    const failed = isRebalancingOutcome(cls);
    const at = now();
    if (!failed && registry.size() === 0 && accountGate.accounts.size === 0) return cls === "success" ? accountGate.servedUnwatched(at) : undefined;
    const reservedAt = (admission.ticket as PacedTicket | undefined)?.reservedAt ?? -Infinity;
    const throttled = o.pacing !== undefined && (cls === "throttled" || cls === "timeout");
    const evidence: Evidence = failed ? "failed" : cls === "aborted" ? "none" : "served";
    const key = scopeKeyOf(address);
    const known = key === undefined ? undefined : registry.peek(key);
    let throttledAccount: AccountPacing | undefined;
    if (throttled) throttledAccount = accountGate.throttled(address, key, known?.lastThrottleAt ?? -Infinity, reservedAt, at);
    else if (evidence === "served") accountGate.served(address, at);
    // The account serves nothing at all (endpoint out, throttled as a whole: its circuit opens at once), not this partition
    // moving; a held circuit stays the account's while it fails (the account's probes may all come from this partition).
    const health = failed ? accountGate.failed(address, key, at, result.error) : "serving";
    const accountOut = health !== "serving" || (failed && (throttledAccount !== undefined || known?.heldBy !== undefined));
    if (key === undefined) return;
    const scope = failed ? (known === undefined ? addScope(key, address, at) : registry.touch(key)) : known;
    if (scope === undefined) return;
    announcer.observe(scope, at);
    // Held by its account, the circuit is probed in turn with the account's others (accountGate.ts).
    const resetInMs = accountOut ? Math.min(ACCOUNT_PROBE_IN_MS, o.resetTimeoutInMs) : o.resetTimeoutInMs;
    const change = scope.record(at, evidence, throttled, reservedAt, { resetInMs, accountOut: health === "out", probeAt: probeOf(admission) ?? null });
    if (change === undefined) return;
    announcer.announce(scope, change.to);
    if (change.to === "open") accountGate.hold(scope, accountOut, address);
  };

  const addScope = (key: string, address: RequestAddress, at: number): TroubledScope =>
    registry.add(key, new TroubledScope(key, address.service ?? o.service ?? "table", at, settings));

  /** Scopes whose circuit reads `wanted` now (no timer per circuit: the registry is read when asked). */
  const scopesIn = (wanted: CircuitState, at = now()): string[] => [...registry.values()].filter((scope) => scope.stateAt(at) === wanted).map((scope) => scope.key);

  return withRecoveryWindows({
    get size() {
      return registry.size();
    },
    admit,
    record,
    abandon,
    stateOf(key) {
      return registry.peek(key)?.stateAt(now());
    },
    openScopes() {
      return scopesIn("open");
    },
    halfOpenScopes() {
      return scopesIn("half_open");
    },
    refusesNow(address) {
      if (quiet()) return false;
      const key = scopeKeyOf(address);
      return key !== undefined && registry.peek(key)?.refuses(now()) === true;
    },
    wakeOf(address) {
      if (disposed || registry.size() === 0) return undefined;
      const key = scopeKeyOf(address);
      return key === undefined ? undefined : registry.peek(key)?.waiters;
    },
    statusOf(key) {
      if (disposed) return HEALTHY_PARTITION;
      return registry.peek(key)?.status(now()) ?? HEALTHY_PARTITION;
    },
    pacedScopes() {
      const at = now();
      const paced: PacedScope[] = [];
      for (const scope of registry.values()) {
        const ratePerSecond = scope.pacedRate(at);
        if (ratePerSecond !== undefined) paced.push({ scope: scope.key, ratePerSecond, level: "partition" });
      }
      return accountGate.pacedAccounts(at, paced);
    },
    stateCounts() {
      const at = now();
      const counts: Record<CircuitState, number> = { closed: 0, open: 0, half_open: 0 };
      for (const scope of registry.values()) counts[scope.stateAt(at)] += 1;
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
  });
}
