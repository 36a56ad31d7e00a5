import { isFunction, numberOption, optionsObject, optionWhere, type OptionsShape } from "../validation/optionSchema.js";

/** Options of {@link createRetryBudget}. Every one is optional. */
export interface RetryBudgetOptions {
  /** Retries as a fraction of the requests (first attempts) in the window (Finagle's `percentCanRetry`); 0: only the floor. Defaults to 0.5. */
  retryRatio?: number;
  /** Retries allowed per second whatever the request rate, so a quiet client can still retry. Defaults to 10. */
  minRetriesPerSecond?: number;
  /** How long a request's deposit and a retry's withdrawal count, in milliseconds. Defaults to 10000. */
  windowInMs?: number;
  /** Monotonic clock in milliseconds. Defaults to `performance.now`; tests inject their own. */
  now?: () => number;
}

/**
 * Defaults of {@link createRetryBudget}: 50 % of requests and 10 retries per second over 10 s.
 * Finagle's 20 % suits RPC fan-out; for storage writes a refused retry is a failed write, and
 * 50 % still bounds an account-wide storm (figures in docs/benchmarks.md, "Why the code is as it is").
 */
export const DEFAULT_RETRY_BUDGET_OPTIONS = Object.freeze({
  retryRatio: 0.5,
  minRetriesPerSecond: 10,
  windowInMs: 10_000,
});

/**
 * A retry budget: a token bucket whose tokens expire with the window. Every request deposits
 * `retryRatio` of a token, every retry withdraws one (given back when it succeeds), and
 * `minRetriesPerSecond` per second of the window are always there: however many operations fail
 * at once, the window's failed retries stay within reserve + retryRatio × its requests, and cannot
 * multiply the load of a throttled account.
 */
export interface RetryBudget {
  /** Counts one request (an operation's first attempt); `at`: `performance.now()` if just read (a budget with its own `now` ignores it). */
  recordRequest(at?: number): void;
  /** Spends one retry and returns true, or returns false when the budget is exhausted. */
  tryRetry(): boolean;
  /**
   * Optional: a retry spent by `tryRetry` succeeded, and gives its retry back. A retry that worked
   * multiplied no load, so the budget binds only while retries keep failing (a storm), as the AWS
   * SDKs' retry quota refunds a success.
   */
  refund?(): void;
  /** What it holds now: `requests` counted in the window, `retries` spent in it, whole retries still `available`. */
  snapshot(): { requests: number; retries: number; available: number };
  /**
   * Free of side effects: 0 when a retry may be spent now, otherwise when the window next
   * moves on (a withdrawal may expire then). New requests deposit and successful retries are
   * refunded meanwhile, so a caller that waits for the budget asks again sooner than this.
   */
  retryAfterInMs(): number;
}

/** The window is kept as this many buckets; a deposit expires with its bucket. */
const BUCKETS = 10;

const d = DEFAULT_RETRY_BUDGET_OPTIONS;
/** Validates budget options once, with errors naming the option by its path (`retryBudget.retryRatio`; `""` for the factory's own). */
export const resolveRetryBudgetOptions = optionsObject(
  {
    retryRatio: numberOption({ max: 10 }, d.retryRatio),
    minRetriesPerSecond: numberOption({ max: 1_000_000 }, d.minRetriesPerSecond),
    windowInMs: numberOption({ min: 100, max: 3_600_000 }, d.windowInMs),
    now: optionWhere<() => number>(isFunction, "a function returning milliseconds"),
  } satisfies OptionsShape<RetryBudgetOptions>,
  { root: "createRetryBudget options" },
);

/**
 * Creates a {@link RetryBudget}. Pure bookkeeping: no timers; time is read from `now` on
 * each call. One budget per client and service (`installResilience` makes one per install).
 *
 * @example
 * const budget = createRetryBudget({ retryRatio: 0.1 });
 * pipeline.addPolicy(resilientRetryPolicy({ retryBudget: budget }), { phase: "Retry" });
 */
export function createRetryBudget(options: RetryBudgetOptions = {}): RetryBudget {
  const { retryRatio, minRetriesPerSecond, windowInMs, now: clock } = resolveRetryBudgetOptions(options, "");
  const now = clock ?? (() => performance.now());
  const reserve = (minRetriesPerSecond * windowInMs) / 1000;
  const width = windowInMs / BUCKETS;
  const requests = new Float64Array(BUCKETS);
  const retries = new Float64Array(BUCKETS);
  const epochs = new Float64Array(BUCKETS).fill(-Infinity);
  let latest = -Infinity;

  /** The current bucket (at `t`, or by the clock), emptied as its epoch starts; a clock that steps back is held at its latest value. */
  const bucket = (t: number = now()): number => {
    if (Number.isFinite(t) && t > latest) latest = t;
    const epoch = Number.isFinite(latest) ? Math.floor(latest / width) : 0;
    const slot = ((epoch % BUCKETS) + BUCKETS) % BUCKETS;
    if (epochs[slot] !== epoch) {
      epochs[slot] = epoch;
      requests[slot] = 0;
      retries[slot] = 0;
    }
    return slot;
  };
  /** The window's requests and retries: the buckets of the last BUCKETS epochs up to `slot`'s. */
  const totals = (slot: number): { requests: number; retries: number } => {
    const t = { requests: 0, retries: 0 };
    for (let i = 0; i < BUCKETS; i++) {
      if ((epochs[i] as number) <= (epochs[slot] as number) - BUCKETS) continue;
      t.requests += requests[i] as number;
      t.retries += retries[i] as number;
    }
    return t;
  };
  const balance = (t: { requests: number; retries: number }): number => reserve + retryRatio * t.requests - t.retries;

  return {
    recordRequest(at?: number): void {
      const slot = bucket(clock !== undefined || at === undefined ? now() : at);
      requests[slot] = (requests[slot] as number) + 1;
    },
    tryRetry(): boolean {
      const slot = bucket();
      if (balance(totals(slot)) < 1) return false;
      retries[slot] = (retries[slot] as number) + 1;
      return true;
    },
    refund(): void {
      const slot = bucket();
      // Net of the window: never more back than was spent in it.
      if (totals(slot).retries >= 1) retries[slot] = (retries[slot] as number) - 1;
    },
    snapshot() {
      const t = totals(bucket());
      return { ...t, available: Math.max(0, Math.floor(balance(t))) };
    },
    retryAfterInMs(): number {
      const t = now();
      if (balance(totals(bucket(t))) >= 1) return 0;
      const at = Number.isFinite(latest) ? latest : t;
      return width - (((at % width) + width) % width);
    },
  };
}
