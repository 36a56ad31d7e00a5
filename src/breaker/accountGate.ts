// The account gate: accounts throttled as a whole, watched and paced beside the per-partition gate
// (partitionBreaker.ts), which asks it for the account's slot, tells it every answer, and has it close
// the circuits an account's throttle opened once that account serves again.
import type { RequestAddress } from "../address/requestAddress.js";
import { AccountPacing } from "../flow/accountPacing.js";
import type { Pacer } from "../flow/pacer.js";
import type { PacedScope } from "../flow/pacedScope.js";
import type { ResolvedPacingOptions } from "../flow/pacingOptions.js";

/** Accounts whose throttling is watched at once: a client talks to one, a few at most. */
const MAX_ACCOUNTS = 64;

/** What the account gate asks of a partition's state: which account's throttle holds its circuit open, and to hold it so. */
export interface AccountHeldScope {
  readonly heldBy: string | undefined;
  holdFor(account: string | undefined): void;
}

const accountKeyOf = (address: RequestAddress): string | undefined => {
  const scope = address.scope;
  return scope === undefined ? undefined : `${scope.service}|${scope.account}`;
};

/**
 * The accounts that answered throttled lately (see {@link AccountPacing}), at most
 * {@link MAX_ACCOUNTS}, least recently used first. While it watches none, its
 * `accounts.size` is 0 and the partition gate's success path asks it nothing.
 */
export class AccountGate<S extends AccountHeldScope> {
  /** Read-only outside: the partition gate's success path reads its `size` (a property, no call). */
  readonly accounts: ReadonlyMap<string, AccountPacing>;
  readonly #accounts = new Map<string, AccountPacing>();
  /** Accounts whose throttle opened circuits that may still be open: their next success closes them. */
  readonly #holding = new Set<string>();
  readonly #pacing: ResolvedPacingOptions | undefined;
  readonly #scopes: () => Iterable<S>;
  readonly #release: (state: S, at: number) => void;

  /**
   * `scopes` lists the partition gate's states; `release` closes one whose circuit its account's
   * throttle opened, when that account serves again.
   */
  constructor(pacing: ResolvedPacingOptions | undefined, scopes: () => Iterable<S>, release: (state: S, at: number) => void) {
    this.accounts = this.#accounts;
    this.#pacing = pacing;
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

  /** An answer that proves `address`'s account serves: the circuits its throttle opened close now. */
  served(address: RequestAddress, at: number): void {
    const account = this.#accountOf(address, false, at);
    account?.served(at);
    const key = account === undefined ? undefined : accountKeyOf(address);
    if (key !== undefined && this.#holding.delete(key)) this.#releaseHeldCircuits(key, at);
  }

  /** `state`'s circuit has just opened: held by `account`'s throttle (as {@link throttled} returned it), or by none. */
  hold(state: S, account: AccountPacing | undefined, address: RequestAddress): void {
    const key = account === undefined ? undefined : accountKeyOf(address);
    state.holdFor(key);
    if (key !== undefined) this.#holding.add(key);
  }

  /** Adds every paced account, with its rate at `at`, to `paced`; returns it. */
  pacedAccounts(at: number, paced: PacedScope[]): PacedScope[] {
    for (const [key, account] of this.#accounts) {
      const pacer = account.pacedAt(at);
      if (pacer !== undefined) paced.push({ scope: key, ratePerSecond: pacer.rate.rateAt(at), level: "account" });
    }
    return paced;
  }

  clear(): void {
    this.#accounts.clear();
    this.#holding.clear();
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
