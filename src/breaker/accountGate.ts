// The account gate: accounts throttled as a whole, watched and paced beside the per-partition gate
// (partitionBreaker.ts), which asks it for the account's slot, tells it every answer, and has it close
// the circuits an account's throttle opened once that account serves again.
import type { RequestAddress } from "../address/requestAddress.js";
import { AccountPacing } from "../flow/accountPacing.js";
import type { Pacer } from "../flow/pacer.js";
import type { PacedScope } from "../flow/pacedScope.js";
import type { ResolvedPacingOptions } from "../flow/pacingOptions.js";
import { ACCOUNT_PROBE_IN_MS, QUIET_IN_MS } from "./circuit.js";
import { errorCodeOf } from "../classification/networkErrors.js";

/** Accounts watched at once (throttling, health, recovery windows): a client talks to one, a few at most. */
export const MAX_ACCOUNTS = 64;

/**
 * What says an account (or its endpoint) serves nothing at all, rather than one partition being moved:
 * no answer served anywhere on it for {@link QUIET_IN_MS}, while more than one partition failed in that time
 * (and, to be out before a failure, `consecutiveFailures` of them in a row); or `consecutiveFailures`
 * connections refused in a row (see {@link AccountGate.failed}).
 */
interface AccountHealth {
  servedAt: number;
  /** Failures anywhere on the account since its last success: a circuit's own rule, counted over the account. */
  failuresInRow: number;
  /** Of them, connections refused (see `failed`). */
  refusalsInRow: number;
  failedAt: number;
  failedScope: string | undefined;
  /** When a failure came from a partition other than the one before it, within QUIET_IN_MS. */
  spreadAt: number;
  /** When a circuit this account holds last took a probe: one per {@link ACCOUNT_PROBE_IN_MS} for all of them. */
  probedAt: number;
}

/** What the account gate asks of a partition's state: which account's throttle holds its circuit open, and to hold it so. */
export interface AccountHeldScope {
  readonly heldBy: string | undefined;
  holdFor(account: string | undefined): void;
}

/** `address`'s account key, `service|account` (the scope key of an account), or undefined when it has no scope. */
export const accountKeyOf = (address: RequestAddress): string | undefined => {
  const scope = address.scope;
  return scope === undefined ? undefined : `${scope.service}|${scope.account}`;
};

/**
 * The accounts that answered throttled lately (see {@link AccountPacing}), at most
 * {@link MAX_ACCOUNTS}, least recently used first. While it watches none, its
 * `accounts.size` is 0 and the partition gate's success path only tells it the time
 * ({@link AccountGate.servedUnwatched}).
 */
export class AccountGate<S extends AccountHeldScope> {
  /** Read-only outside: the partition gate's success path reads its `size` (a property, no call). */
  readonly accounts: ReadonlyMap<string, AccountPacing>;
  readonly #accounts = new Map<string, AccountPacing>();
  /** Accounts whose throttle opened circuits that may still be open: their next success closes them. */
  readonly #holding = new Set<string>();
  /** Accounts seen lately while the breaker watches anything (see {@link AccountHealth}), least recently used first. */
  readonly #health = new Map<string, AccountHealth>();
  readonly #pacing: ResolvedPacingOptions | undefined;
  readonly #consecutiveFailures: number;
  /**
   * The last success on any account (`-Infinity`: none yet). An account's health starts from it at its
   * first failure: a frozen endpoint's first failures are the resets of attempts held for seconds, and
   * the time before them is what tells it served nothing. Any account's: later than, or as late as,
   * this account's own, so it can only hide an outage, never make one up.
   */
  #lastServedAt = -Infinity;
  readonly #scopes: () => Iterable<S>;
  readonly #release: (state: S, at: number) => void;

  /**
   * `scopes` lists the partition gate's states; `release` closes one whose circuit its account's
   * throttle opened, when that account serves again. `consecutiveFailures` is the circuits' option: an
   * account that failed that many times in a row is out as a whole.
   */
  constructor(pacing: ResolvedPacingOptions | undefined, consecutiveFailures: number, scopes: () => Iterable<S>, release: (state: S, at: number) => void) {
    this.accounts = this.#accounts;
    this.#pacing = pacing;
    this.#consecutiveFailures = consecutiveFailures;
    this.#scopes = scopes;
    this.#release = release;
  }

  /**
   * `address`'s account while its pacing is engaged (it has a pacer, paced or still measuring):
   * every attempt to it takes a slot of that pacer too. Undefined otherwise.
   */
  engaged(address: RequestAddress, at: number): (AccountPacing & { readonly pacer: Pacer }) | undefined {
    const account = this.#accountOf(address, false, at);
    return account?.pacer === undefined ? undefined : (account as AccountPacing & { readonly pacer: Pacer });
  }

  /**
   * A throttled answer from partition `scope` (which last answered throttled at `lastThrottleAt`), to an
   * attempt whose slot was reserved at `reservedAt`. Returns the account when it is paced: a circuit this
   * answer opens is then its throttle's (see {@link hold}).
   */
  throttled(address: RequestAddress, scope: string | undefined, lastThrottleAt: number, reservedAt: number, at: number): AccountPacing | undefined {
    // A partition's first throttle is what a growing table being split looks like; only repeats are the account's evidence.
    const repeat = this.#pacing !== undefined && at - lastThrottleAt < this.#pacing.forgetAfterInMs;
    const account = this.#accountOf(address, true, at);
    account?.throttled(scope ?? "", repeat, reservedAt, at);
    return account?.pacer !== undefined ? account : undefined;
  }

  /**
   * A success while the breaker watches nothing: only its time is kept (see {@link AccountGate.failed}).
   * What it knew of accounts is stale then (their scopes were swept while successes went unwatched):
   * counts kept from an old outage would read one failure on a healthy account as an outage.
   */
  servedUnwatched(at: number): void {
    this.#lastServedAt = at;
    if (this.#health.size === 0) return;
    this.#health.clear();
    this.#holding.clear();
  }

  /** An answer that proves `address`'s account serves: the circuits its outage or throttle opened close now. */
  served(address: RequestAddress, at: number): void {
    this.#lastServedAt = at;
    this.#accountOf(address, false, at)?.served(at);
    const key = accountKeyOf(address);
    if (key === undefined) return;
    const health = this.#health.get(key);
    if (health !== undefined) {
      health.servedAt = at;
      health.failuresInRow = 0;
      health.refusalsInRow = 0;
    }
    if (this.#holding.delete(key)) this.#releaseHeldCircuits(key, at);
  }

  /**
   * A rebalancing failure from partition `scope` of `address`'s account. Returns what it says of the account
   * (see {@link AccountHealth}): `"out"`, it served nothing at all already before this failure (a circuit
   * this failure opens is the account's to hold, and need not wait for a count of its own); `"now-out"`,
   * this failure is the one that shows it (the account's to hold, but one partition's failures and then
   * another's first are not yet enough to open that other's circuit at once); `"serving"`.
   *
   * `error`: what the attempt threw. Connections refused (nothing listens at the endpoint): that many in a row
   * are the account out with no quiet quarter second: the quiet is there for a hot partition, whose
   * throttled answers come between successes, and a refused connection is no partition's answer.
   */
  failed(address: RequestAddress, scope: string | undefined, at: number, error: unknown): "out" | "now-out" | "serving" {
    const key = accountKeyOf(address);
    if (key === undefined) return "serving";
    let health = this.#health.get(key);
    if (health !== undefined) {
      // Least recently used first: an account failing now is not the one to forget.
      this.#health.delete(key);
      this.#health.set(key, health);
    } else {
      // Its successes were not watched until now: the last success seen anywhere, else this first failure (as a circuit's).
      health = { servedAt: this.#lastServedAt === -Infinity ? at : this.#lastServedAt, failuresInRow: 0, refusalsInRow: 0, failedAt: -Infinity, failedScope: scope, spreadAt: -Infinity, probedAt: -Infinity };
      this.#health.set(key, health);
      if (this.#health.size > MAX_ACCOUNTS) this.#health.delete(this.#health.keys().next().value as string);
    }
    const quiet = at - health.servedAt >= QUIET_IN_MS;
    // Out already, by the circuit's own rule (that many failures in a row, nothing served) over more than one partition.
    const enough = this.#consecutiveFailures;
    const wasOut = (quiet && at - health.spreadAt < QUIET_IN_MS && health.failuresInRow >= enough) || health.refusalsInRow >= enough;
    health.failuresInRow += 1;
    if (errorCodeOf(error) === "ECONNREFUSED") health.refusalsInRow += 1;
    if (health.failedScope !== scope && at - health.failedAt < QUIET_IN_MS) health.spreadAt = at;
    health.failedScope = scope;
    health.failedAt = at;
    if (wasOut) return "out";
    // Out as this failure shows it: nothing served for the quiet quarter second, failures spread (no count needed to hold).
    return (quiet && at - health.spreadAt < QUIET_IN_MS) || health.refusalsInRow >= enough ? "now-out" : "serving";
  }

  /** `state`'s circuit has just opened: held by its account (`held`: its outage or throttle as a whole), or by none. */
  hold(state: S, held: boolean, address: RequestAddress): void {
    const key = held ? accountKeyOf(address) : undefined;
    state.holdFor(key);
    if (key !== undefined) this.#holding.add(key);
  }

  /**
   * A circuit held by `accountKey` asks for the account's probe: takes it and returns 0 when it is
   * free (one probe per {@link ACCOUNT_PROBE_IN_MS} for all the circuits the account holds, since
   * one answer tells for all of them), else returns how long until it is, taking nothing.
   */
  takeProbe(accountKey: string, at: number): number {
    const health = this.#health.get(accountKey);
    if (health === undefined) return 0;
    const dueIn = health.probedAt + ACCOUNT_PROBE_IN_MS - at;
    if (dueIn > 0) return dueIn;
    health.probedAt = at;
    return 0;
  }

  /** Adds every paced account, with its rate at `at`, to `paced`; returns it. */
  pacedAccounts(at: number, paced: PacedScope[]): PacedScope[] {
    for (const [key, account] of this.#accounts) {
      const pacer = account.pacedAt(at);
      if (pacer !== undefined) paced.push({ scope: key, ratePerSecond: pacer.rate.rateAt(at), level: "account" });
    }
    return paced;
  }

  /** The probe a circuit held by `accountKey` took was not sent: the next due may go at once. */
  probeReturned(accountKey: string): void {
    const health = this.#health.get(accountKey);
    if (health !== undefined) health.probedAt = -Infinity;
  }

  clear(): void {
    this.#accounts.clear();
    this.#holding.clear();
    this.#health.clear();
  }

  #accountOf(address: RequestAddress, create: boolean, at: number): AccountPacing | undefined {
    const accounts = this.#accounts;
    if (!create && accounts.size === 0) return undefined;
    const key = accountKeyOf(address);
    if (key === undefined) return undefined;
    let account = accounts.get(key);
    if (account !== undefined && !create && account.idle(at)) {
      accounts.delete(key);
      return undefined;
    }
    if (account === undefined && create && this.#pacing !== undefined) {
      account = new AccountPacing(at, this.#pacing);
      accounts.set(key, account);
      if (accounts.size > MAX_ACCOUNTS) accounts.delete(accounts.keys().next().value as string);
    }
    return account;
  }

  /**
   * The account throttled as a whole serves again: every circuit its throttle opened closes
   * now, rather than each partition waiting for its own probe (their waiters are woken). One pass over the
   * partition states per throttle episode, not per answer.
   */
  #releaseHeldCircuits(accountKey: string, at: number): void {
    for (const state of this.#scopes()) if (state.heldBy === accountKey) this.#release(state, at);
  }
}
