import type { ClassBackoff } from "./backoffByClass.js";
import type { RetriableClass } from "../classification/outcomeClass.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";

/**
 * One operation's memory of its backoff: per strategy (per class, where classes have their
 * own), the retries it answered and its last wait (decorrelated jitter grows from it). The
 * retry policy makes one at an operation's first retriable failure, so the success path
 * allocates nothing; a failing operation pays for three small objects.
 */
export class OperationBackoff {
  readonly #plan: ClassBackoff;
  /** Retries answered by each class's strategy (kept under the first class that uses it). */
  readonly #retries: Record<RetriableClass, number> = { throttled: 0, transient: 0, timeout: 0 };
  /** Each class's last answered wait (0: none yet). */
  readonly #previous: Record<RetriableClass, number> = { throttled: 0, transient: 0, timeout: 0 };
  /**
   * After {@link next}: the cap to compare the operation's retries with. The class's own cap
   * is folded in (as `retriesDone + the class's retries left`), so one comparison serves both.
   */
  maxRetries = 0;
  /** After {@link next}: the wait before the next retry, made safe to wait on. */
  delayInMs = 0;

  constructor(plan: ClassBackoff) {
    this.#plan = plan;
  }

  /**
   * Answers for a retry after a failure of class `failed`, `retriesDone` retries into the
   * operation, and counts it: the operation retries now or ends, so the count is not undone.
   */
  next(failed: RetriableClass, retriesDone: number): this {
    const strategy = this.#plan[failed];
    // Counted per strategy: classes sharing one share its count and its previous wait.
    const cls = this.#plan.countedWith[failed];
    this.maxRetries = Math.min(this.#plan.maxRetries, retriesDone + strategy.maxRetries - this.#retries[cls]);
    if (retriesDone >= this.maxRetries) {
      this.delayInMs = 0;
      return this;
    }
    this.#retries[cls] += 1;
    this.delayInMs = safeDelay(strategy.delayInMs(this.#retries[cls], this.#previous[cls]), strategy.maxDelayInMs);
    this.#previous[cls] = this.delayInMs;
    return this;
  }
}

/** A user strategy's answer, made safe to wait on: NaN waits the cap's worth, a negative nothing, and no wait passes a day. */
function safeDelay(delayInMs: number, maxDelayInMs: number): number {
  if (typeof delayInMs !== "number" || Number.isNaN(delayInMs)) return Math.min(maxDelayInMs, DAY_IN_MS);
  return Math.min(Math.max(0, delayInMs), DAY_IN_MS);
}
