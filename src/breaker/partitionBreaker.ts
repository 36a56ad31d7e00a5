// The per-partition gate: admit, record and the status queries over one registry of troubled scopes.
// Over 250 lines because they share that registry and its transitions; the circuit (circuit.ts) and
// the pacing (flow/) are in their own files.
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import { logger } from "../logging/logger.js";
import type { StorageService } from "../address/partitionScope.js";
import { AccountPacing } from "../flow/accountPacing.js";
import { Pacer } from "../flow/pacer.js";
import type { AttemptGate, Admission, SendAdmission } from "../policies/attemptGate.js";
import { SEND_NOW } from "../policies/attemptGate.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { ACCOUNT_THROTTLE_RESET_IN_MS, Circuit } from "./circuit.js";
import type { CircuitState, CircuitStateSource, CircuitTransition } from "./circuitStateSource.js";
import { isRebalancingOutcome } from "./isRebalancingOutcome.js";
import { resolvePartitionBreakerOptions, type PartitionBreakerMode, type PartitionBreakerOptions } from "./partitionBreakerOptions.js";
import { HEALTHY_PARTITION, type PartitionStatus } from "./partitionStatus.js";
import type { PacedScope } from "../flow/pacedScope.js";
import { createScopeRegistry } from "./scopeRegistry.js";

/**
 * The retry policy's {@link AttemptGate}, per partition scope: a partition that answers
 * throttled is *paced* at a send rate learnt from its answers (a hot partition keeps being
 * served at its capacity), and a partition that serves nothing at all (being moved) gets
 * its *circuit* opened: its attempts fail locally, or wait, until one probe a reset
 * period later finds it back. A scope with no trouble holds no state and costs nothing.
 */
export interface PartitionBreaker extends AttemptGate, CircuitStateSource {
  /** What callers meet while a circuit is open. */
  readonly mode: PartitionBreakerMode;
  /** Scopes with state (at most `maxScopes`): a rebalancing failure in their recent past. */
  readonly size: number;
  /** The state of one scope's circuit, or undefined when it has none (no rebalancing failure lately). */
  stateOf(scope: string): CircuitState | undefined;
  /** Keys of the scopes whose circuit is open. */
  openScopes(): string[];
  /** Keys of the scopes whose circuit is half-open (a probe is allowed or in flight). */
  halfOpenScopes(): string[];
  /**
   * Whether the scope takes an attempt now, and when to come back: for a dispatcher that
   * asks before it sends (a queue consumer). Cheap and synchronous; changes nothing.
   */
  statusOf(scope: string): PartitionStatus;
  /**
   * Scopes whose attempts are paced, with their current send rate (attempts/s): partitions
   * (`level: "partition"`, keyed as `statusOf` takes them) and accounts throttling as a whole
   * (`level: "account"`, keyed `service|account`), whose rate every attempt to them also keeps.
   */
  pacedScopes(): PacedScope[];
  /** Shuts every circuit down and stops every timer; later attempts pass straight through. Idempotent. */
  dispose(): void;
}

/** While a probe is in flight, waiters ask again after this fraction of the reset period: gently, but soon after it closes. */
const HALF_OPEN_POLL_DIVISOR = 10;
const MIN_HALF_OPEN_POLL_IN_MS = 10;
/** Accounts whose throttling is watched at once: a client talks to one, a few at most. */
const MAX_ACCOUNTS = 64;

/** What the breaker remembers about a scope that had trouble. */
interface ScopeState {
  readonly key: string;
  readonly service: StorageService;
  readonly circuit: Circuit;
  /**
   * The circuit's state as the log and listeners were last told it. Open → half-open happens
   * by time, with no call to return it: it is announced the first time the breaker looks at
   * the circuit after it happened (an admit, a record, or a query).
   */
  announced: CircuitState;
  /** Made at the scope's first throttled answer (pacing on). */
  pacer: Pacer | undefined;
  /** The account (`service|account`) whose throttle as a whole opened this circuit: the account's next success closes it. */
  heldBy: string | undefined;
  lastFailureAt: number;
  lastThrottleAt: number;
}

/**
 * When an attempt's slot was reserved, handed back to `record`. A slot reserved before the
 * last cut was spaced at the old rate: its throttled answer is no news, so it cuts nothing.
 */
interface PacedTicket {
  reservedAt: number;
  /** The attempt is its half-open circuit's probe: confirmed after its paced wait without being refused by itself. */
  probe: boolean;
}

/**
 * Creates a {@link PartitionBreaker}. State is made per scope at its first rebalancing
 * failure (until then its attempts go out unwatched; while no scope has state, not even
 * the scope is read) and retired once its circuit is closed and it has had no failure for
 * `rollingWindowInMs` (and no throttled answer for `pacing.forgetAfterInMs`); at most
 * `maxScopes` live, idle ones swept after `idleTtlInMs` by one `unref()`ed timer.
 *
 * @example
 * const breaker = createPartitionBreaker({ mode: "fail", service: "table" });
 * const policy = resilientRetryPolicy({ gate: breaker });
 * // ... on shutdown:
 * breaker.dispose();
 */
export function createPartitionBreaker(options: PartitionBreakerOptions = {}): PartitionBreaker {
  const o = resolvePartitionBreakerOptions(options);
  const halfOpenPollInMs = Math.max(MIN_HALF_OPEN_POLL_IN_MS, Math.round(o.resetTimeoutInMs / HALF_OPEN_POLL_DIVISOR));
  const circuitConfig = { resetTimeoutInMs: o.resetTimeoutInMs, consecutiveFailures: o.consecutiveFailures, halfOpenPollInMs };
  const now = (): number => Date.now();
  const listeners = new Set<(transition: CircuitTransition) => void>();
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
  /** Accounts that answered throttled lately (see AccountPacing), least recently used first. */
  const accounts = new Map<string, AccountPacing>();
  let disposed = false;

  const accountKeyOf = (address: RequestAddress): string | undefined => {
    const scope = address.scope;
    return scope === undefined ? undefined : `${scope.service}|${scope.account}`;
  };
  const accountOf = (address: RequestAddress, create: boolean, at: number): AccountPacing | undefined => {
    if (!create && accounts.size === 0) return undefined;
    const key = accountKeyOf(address);
    if (key === undefined) return undefined;
    let account = accounts.get(key);
    if (account !== undefined && !create && account.idle(at)) {
      accounts.delete(key);
      return undefined;
    }
    if (account === undefined && create && o.pacing !== undefined) {
      account = new AccountPacing(at, o.pacing);
      accounts.set(key, account);
      if (accounts.size > MAX_ACCOUNTS) accounts.delete(accounts.keys().next().value as string);
    }
    return account;
  };

  /** Logs and delivers `state`'s circuit moving from what was last announced to `to`, if it moved. */
  const announce = (state: ScopeState, to: CircuitState): void => {
    const from = state.announced;
    if (from === to) return;
    state.announced = to;
    logger.warning(describeTransition(state.key, from, to, o.resetTimeoutInMs));
    const event: CircuitTransition = { service: state.service, scope: state.key, from, to };
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warning(`A circuit transition listener threw and was ignored: ${(error as Error)?.name ?? "error"}`);
      }
    }
  };
  /** Reads `state`'s circuit at `at`, announcing the change time made (open → half-open) since the breaker last looked. */
  const observe = (state: ScopeState, at: number): CircuitState => {
    const current = state.circuit.stateAt(at);
    announce(state, current);
    return current;
  };
  /** Scopes whose circuit reads `wanted` now (no timer per circuit: the registry is read when asked). */
  const scopesIn = (wanted: CircuitState): string[] => {
    const at = now();
    const keys: string[] = [];
    for (const state of registry.values()) if (observe(state, at) === wanted) keys.push(state.key);
    return keys;
  };

  // The key an operation's address maps to when it is not the address's own (a user getScope, or this
  // breaker's service where the policy gave none, as for Azurite's path-style URLs): read once per operation.
  const ownKeys = new WeakMap<RequestAddress, string | undefined>();
  const scopeKeyOf = (address: RequestAddress): string | undefined => {
    if (o.getScope === undefined && (o.service === undefined || address.service === o.service)) return address.scopeKey;
    if (ownKeys.has(address)) return ownKeys.get(address);
    const key = readOwnKey(address);
    ownKeys.set(address, key);
    return key;
  };
  const readOwnKey = (address: RequestAddress): string | undefined => {
    if (o.getScope === undefined) return readRequestAddress(address.request, o.service).scopeKey;
    try {
      const key = o.getScope(address.request);
      return typeof key === "string" ? key : undefined;
    } catch {
      // A scope that cannot be read costs that request the breaker's protection, not the request.
      return undefined;
    }
  };

  const admit = (address: RequestAddress, remainingInMs: number, reserved?: SendAdmission): Admission => {
    if (disposed || (registry.size() === 0 && accounts.size === 0)) return reserved ?? SEND_NOW;
    const at = now();
    const key = scopeKeyOf(address);
    const state = key === undefined ? undefined : registry.touch(key);
    if (state === undefined) return reserved ?? admitToAccount(address, at, remainingInMs, 0, key);
    const { circuit } = state;
    const probing = observe(state, at) === "half_open";
    const probeBack = reserved !== undefined && (reserved.ticket as PacedTicket | undefined)?.probe === true;
    if (!(probeBack ? circuit.readmitProbe(at) : circuit.admit(at))) {
      return { decision: "refuse", reason: "circuit-open", scope: state.key, retryAfterInMs: circuit.retryAfterInMs(at) };
    }
    if (reserved !== undefined) return reserved;
    // Calm for forgetAfterInMs: what the pacer learnt is stale (statusOf and pacedScopes already say
    // healthy), so it goes now rather than when the sweep retires the scope.
    if (state.pacer !== undefined && forgotten(state, at)) state.pacer = undefined;
    const slot = state.pacer === undefined ? 0 : state.pacer.reserve(at, remainingInMs);
    if (typeof slot !== "number") {
      circuit.returnProbe(at);
      return { decision: "refuse", reason: "paced", scope: state.key, retryAfterInMs: slot.refusedFor };
    }
    if (!probing) return admitToAccount(address, at, remainingInMs, slot, state.key, state.pacer !== undefined);
    // A probe never queues behind a paced account: reserved far out at the account's throttled rate, it would
    // hold its circuit half-open (every other attempt refused) for that long after the account serves again.
    const admission = admitToAccount(address, at, Math.min(remainingInMs, halfOpenPollInMs), slot, state.key, state.pacer !== undefined, true);
    if (admission.decision === "send") return admission;
    circuit.returnProbe(at);
    return { decision: "refuse", reason: "circuit-open", scope: state.key, retryAfterInMs: Math.min(admission.retryAfterInMs, halfOpenPollInMs) };
  };

  /** The account's slot too, when the account is paced; the attempt waits for the later of the two. */
  const admitToAccount = (address: RequestAddress, at: number, remainingInMs: number, scopeDelayInMs: number, scope: string | undefined, paced = false, probe = false): Admission => {
    const accountPacer = accountOf(address, false, at)?.pacer;
    const accountSlot = accountPacer === undefined ? 0 : accountPacer.reserve(at, remainingInMs);
    if (typeof accountSlot !== "number") {
      return { decision: "refuse", reason: "paced", scope: scope ?? "account", retryAfterInMs: accountSlot.refusedFor };
    }
    if (!paced && accountPacer === undefined) return SEND_NOW;
    const ticket: PacedTicket = { reservedAt: at, probe };
    return { decision: "send", delayInMs: Math.max(scopeDelayInMs, accountSlot), ticket, paced: true };
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
    if (throttled) {
      // A partition's first throttle is what a growing table being split looks like; only repeats are the account's evidence.
      const repeat = known !== undefined && o.pacing !== undefined && at - known.lastThrottleAt < o.pacing.forgetAfterInMs;
      const account = accountOf(address, true, at);
      account?.throttled(key ?? "", repeat, reservedAt, at);
      if (account?.pacer !== undefined) throttledAccount = account;
    } else if (served) {
      const account = accountOf(address, false, at);
      account?.served(at);
      if (account?.holdsCircuits === true) releaseHeldCircuits(account, accountKeyOf(address), at);
    }
    if (key === undefined) return;
    const state = failed ? (known === undefined ? addState(key, address) : registry.touch(key)) : known;
    if (state === undefined) return;
    const before = observe(state, at);
    // The account throttled as a whole, not this partition moving: if this opens the circuit, it is probed again
    // soon, and the account's first success anywhere closes it.
    const resetInMs = throttledAccount !== undefined ? Math.min(ACCOUNT_THROTTLE_RESET_IN_MS, o.resetTimeoutInMs) : o.resetTimeoutInMs;
    const change = state.circuit.record(cls === "aborted" ? "none" : failed ? "failed" : "served", at, resetInMs);
    if (change !== undefined) announce(state, change.to);
    if (change?.to === "open") {
      state.heldBy = throttledAccount === undefined ? undefined : accountKeyOf(address);
      if (throttledAccount !== undefined) throttledAccount.holdsCircuits = true;
    } else if (change?.to === "closed") state.heldBy = undefined;
    // Back from serving nothing (a move): what the pacer learnt about it then says nothing about now.
    if (change?.from === "half_open" && change.to === "closed") state.pacer = undefined;
    // The served rate is the pacer's floor, and its successes drive the slow start.
    if (served) state.pacer?.rate.served(at);
    if (!failed) return;
    state.lastFailureAt = at;
    // Throttles while the circuit is not closed (probes into an outage) teach the pacer nothing.
    if (!throttled || o.pacing === undefined || before !== "closed") return;
    const throttledLately = at - state.lastThrottleAt < o.pacing.forgetAfterInMs;
    state.lastThrottleAt = at;
    // A partition's first throttle is no evidence (a growing table's new ranges are each hot once): its pacer
    // comes with the second. Split-once partitions then cost no pacer (within 2x of pacing off at 100,000 of them).
    if (state.pacer === undefined && !throttledLately) return;
    state.pacer ??= new Pacer(at, o.pacing);
    // An attempt admitted before the scope had a pacer counts as reserved before any cut.
    if (state.pacer.rate.throttled(reservedAt, at)) {
      logger.info(`Partition scope "${state.key}" is throttled: pacing it at ${state.pacer.rate.rateAt(at).toFixed(1)} attempts/s.`);
    }
  };

  /**
   * The account throttled as a whole serves again: every circuit its throttle opened closes
   * now, rather than each partition waiting for its own probe (their waiters then come back
   * at their next ask, and the account pacer's slow start spreads them). One pass over the
   * registry per throttle episode, not per answer.
   */
  const releaseHeldCircuits = (account: AccountPacing, accountKey: string | undefined, at: number): void => {
    account.holdsCircuits = false;
    for (const state of registry.values()) {
      if (state.heldBy === undefined || state.heldBy !== accountKey) continue;
      state.heldBy = undefined;
      observe(state, at);
      const change = state.circuit.close(at);
      if (change !== undefined) announce(state, change.to);
      // What the partition's pacer learnt while its account was throttled says nothing about it now.
      state.pacer = undefined;
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
    };
    registry.add(key, state);
    return state;
  };

  return {
    mode: o.mode,
    get size() {
      return registry.size();
    },
    admit,
    record,
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
    statusOf(scope) {
      if (disposed) return HEALTHY_PARTITION;
      const state = registry.peek(scope);
      if (state === undefined) return HEALTHY_PARTITION;
      const at = now();
      const { circuit, pacer } = state;
      const circuitState = observe(state, at);
      if (circuitState !== "closed") {
        return { state: circuitState, available: !circuit.refuses(at), retryAfterInMs: circuit.retryAfterInMs(at) };
      }
      if (pacer === undefined || !pacer.rate.paced || forgotten(state, at)) return HEALTHY_PARTITION;
      const queueInMs = pacer.queueInMs(at);
      return { state: "paced", available: queueInMs === 0, retryAfterInMs: queueInMs, ratePerSecond: pacer.rate.rateAt(at) };
    },
    pacedScopes() {
      const at = now();
      const paced: PacedScope[] = [];
      for (const state of registry.values()) {
        if (state.pacer?.rate.paced && !forgotten(state, at)) paced.push({ scope: state.key, ratePerSecond: state.pacer.rate.rateAt(at), level: "partition" });
      }
      for (const [key, account] of accounts) {
        const pacer = account.pacedAt(at);
        if (pacer !== undefined) paced.push({ scope: key, ratePerSecond: pacer.rate.rateAt(at), level: "account" });
      }
      return paced;
    },
    stateCounts() {
      const at = now();
      const counts: Record<CircuitState, number> = { closed: 0, open: 0, half_open: 0 };
      for (const state of registry.values()) counts[observe(state, at)] += 1;
      return counts;
    },
    onTransition(listener) {
      if (typeof listener !== "function") throw new TypeError("onTransition needs a listener function.");
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    dispose() {
      if (disposed) return;
      disposed = true;
      registry.clear();
      accounts.clear();
      listeners.clear();
    },
  };
}

function describeTransition(key: string, from: CircuitState, to: CircuitState, resetTimeoutInMs: number): string {
  const scope = `Circuit for partition scope "${key}"`;
  if (to === "open") {
    const why = from === "half_open" ? "the probe failed" : "the partition served nothing through several failures in a row";
    return `${scope} opened (${why}); next probe in ${resetTimeoutInMs} ms.`;
  }
  if (to === "half_open") return `${scope} is half-open: one probe may go through.`;
  return `${scope} closed: the partition answers again.`;
}
