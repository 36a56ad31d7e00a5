import { optionalNumberOption } from "../validation/validateNumberOption.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { optionPath } from "../validation/optionPath.js";
import { describeValue } from "../validation/describeValue.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";

/** Options of {@link createRetryBudget}. Every one is optional. */
export interface RetryBudgetOptions {
  /**
   * Retries allowed as a fraction of the requests (first attempts) seen in the window,
   * Finagle's `percentCanRetry`. 0 allows only the floor below. Defaults to 0.5.
   */
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
 * A retry budget: a token bucket whose tokens expire. Every request deposits `retryRatio`
 * of a token, every retry withdraws one (given back when the retry succeeds), and a reserve of
 * `minRetriesPerSecond` tokens per second of the window is always there. Deposits and withdrawals older than the window no
 * longer count. A retry is granted only while the window's retries stay within reserve +
 * retryRatio x its requests, however many operations fail at once: retries cannot multiply
 * the load of a throttled account.
 */
export interface RetryBudget {
  /**
   * Counts one request (an operation's first attempt). `at` is the time now by
   * `performance.now()`, for a caller that has just read it (the retry policy does, so the
   * budget need not read the clock again); a budget made with its own `now` ignores it.
   */
  recordRequest(at?: number): void;
  /** Spends one retry and returns true, or returns false when the budget is exhausted. */
  tryRetry(): boolean;
  /**
   * Optional: a retry spent by `tryRetry` succeeded, and gives its retry back. A retry that
   * worked multiplied no load, so the budget binds only while retries keep failing (a storm), and
   * after a mass failure that ends at once (a frozen endpoint resetting every held connection as it
   * serves again) the retries waiting for it go as fast as the first ones succeed, as the AWS SDKs'
   * retry quota refunds a success.
   */
  refund?(): void;
  /**
   * What the budget holds right now (for tests, logs and the docs' bound): `requests`
   * counted in the window, `retries` spent in it, and the retries still `available` now
   * (floored to whole retries).
   */
  snapshot(): { requests: number; retries: number; available: number };
  /**
   * Free of side effects: 0 when a retry may be spent now, otherwise when the window next
   * moves on (a withdrawal may expire then). New requests deposit and successful retries are
   * refunded meanwhile, so a caller that waits for the budget asks again sooner than this.
   */
  retryAfterInMs(): number;
}

/** What {@link RetryBudget.snapshot} answers. */
export type RetryBudgetSnapshot = ReturnType<RetryBudget["snapshot"]>;

const KNOWN_KEYS = ["retryRatio", "minRetriesPerSecond", "windowInMs", "now"];
/** The window is kept as this many buckets; a deposit expires with its bucket. */
const BUCKETS = 10;

/** Validates budget options once, with errors naming the option by its path under `name` (`retryBudget.retryRatio`; `""` for the factory's own). */
export function resolveRetryBudgetOptions(
  options: unknown,
  name = "retryBudget",
): Required<Omit<RetryBudgetOptions, "now">> & { now: (() => number) | undefined } {
  const o = validateObjectOption(name || "createRetryBudget options", options);
  rejectUnknownKeys(name, o, KNOWN_KEYS);
  const at = (key: string) => optionPath(name, key);
  const d = DEFAULT_RETRY_BUDGET_OPTIONS;
  const retryRatio = optionalNumberOption(at("retryRatio"), o.retryRatio, d.retryRatio, { max: 10 });
  const minRetriesPerSecond = optionalNumberOption(at("minRetriesPerSecond"), o.minRetriesPerSecond, d.minRetriesPerSecond, {
    max: 1_000_000,
  });
  const windowInMs = optionalNumberOption(at("windowInMs"), o.windowInMs, d.windowInMs, { min: 100, max: 3_600_000 });
  if (o.now !== undefined && typeof o.now !== "function") throw new TypeError(`${at("now")} must be a function returning milliseconds; got ${describeValue(o.now)}.`);
  return { retryRatio, minRetriesPerSecond, windowInMs, now: o.now as (() => number) | undefined };
}

/**
 * Creates a {@link RetryBudget}. Pure bookkeeping: no timers; time is read from `now` on
 * each call. One budget per client and service (`installResilience` makes one per install).
 *
 * @example
 * const budget = createRetryBudget({ retryRatio: 0.1 });
 * pipeline.addPolicy(resilientRetryPolicy({ retryBudget: budget }), { phase: "Retry" });
 */
export function createRetryBudget(options: RetryBudgetOptions = {}): RetryBudget {
  const resolved = resolveRetryBudgetOptions(options, "");
  const { retryRatio, minRetriesPerSecond, windowInMs } = resolved;
  const ownClock = resolved.now !== undefined;
  const now = resolved.now ?? (() => performance.now());
  const reserve = (minRetriesPerSecond * windowInMs) / 1000;
  const width = windowInMs / BUCKETS;
  const requests = new Float64Array(BUCKETS);
  const retries = new Float64Array(BUCKETS);
  const epochs = new Float64Array(BUCKETS).fill(-Infinity);
  let latest = -Infinity;

  /** The current bucket's index in time (at `t`, or by the clock); a clock that steps back is held at its latest value. */
  const advance = (t: number = now()): number => {
    if (Number.isFinite(t) && t > latest) latest = t;
    const epoch = Number.isFinite(latest) ? Math.floor(latest / width) : 0;
    const slot = ((epoch % BUCKETS) + BUCKETS) % BUCKETS;
    if (epochs[slot] !== epoch) {
      epochs[slot] = epoch;
      requests[slot] = 0;
      retries[slot] = 0;
    }
    return epoch;
  };
  const totals = (epoch: number): { requests: number; retries: number } => {
    let r = 0;
    let w = 0;
    for (let i = 0; i < BUCKETS; i++) {
      if ((epochs[i] as number) > epoch - BUCKETS) {
        r += requests[i] as number;
        w += retries[i] as number;
      }
    }
    return { requests: r, retries: w };
  };
  const balance = (t: { requests: number; retries: number }): number => reserve + retryRatio * t.requests - t.retries;

  return {
    recordRequest(at?: number): void {
      const epoch = advance(ownClock || at === undefined ? now() : at);
      const slot = ((epoch % BUCKETS) + BUCKETS) % BUCKETS;
      requests[slot] = (requests[slot] as number) + 1;
    },
    tryRetry(): boolean {
      const epoch = advance();
      if (balance(totals(epoch)) < 1) return false;
      const slot = ((epoch % BUCKETS) + BUCKETS) % BUCKETS;
      retries[slot] = (retries[slot] as number) + 1;
      return true;
    },
    refund(): void {
      const epoch = advance();
      const slot = ((epoch % BUCKETS) + BUCKETS) % BUCKETS;
      // Net of the window: never more back than was spent in it.
      if (totals(epoch).retries >= 1) retries[slot] = (retries[slot] as number) - 1;
    },
    snapshot(): RetryBudgetSnapshot {
      const t = totals(advance());
      return { ...t, available: Math.max(0, Math.floor(balance(t))) };
    },
    retryAfterInMs(): number {
      const t = now();
      if (balance(totals(advance(t))) >= 1) return 0;
      const at = Number.isFinite(latest) ? latest : t;
      return width - (((at % width) + width) % width);
    },
  };
}

/** True for a {@link RetryBudget} object (duck-typed, for options that take one). */
export function isRetryBudget(value: unknown): value is RetryBudget {
  const candidate = value as Partial<RetryBudget> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.recordRequest === "function" &&
    typeof candidate.tryRetry === "function" &&
    typeof candidate.retryAfterInMs === "function"
  );
}
