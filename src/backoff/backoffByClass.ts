import { createRetryStrategy, type RetryStrategyConfig } from "./createRetryStrategy.js";
import type { RetryStrategy } from "./retryStrategy.js";
import { isRecord, optionsObject } from "../validation/optionSchema.js";
import type { RetriableClass } from "../classification/outcomeClass.js";

/**
 * A backoff per outcome class: a connection reset is worth retrying within tens of
 * milliseconds, a throttle deserves the storage guidance's backoff. Each entry is a strategy
 * object or a config by name; a class left out uses the policy's `retry` strategy. A config
 * without `maxRetries` takes `retry`'s.
 */
export interface BackoffByClass {
  /** 429, 503 ServerBusy: the service asked us to slow down (and a partition being moved answers this). */
  throttled?: RetryStrategy | RetryStrategyConfig;
  /** Connection resets, 500 InternalError, 502: a fault the next attempt, on a new connection, usually outlives. */
  transient?: RetryStrategy | RetryStrategyConfig;
  /** 408, 504, 500 OperationTimedOut, the per-attempt timeout: the attempt has already spent its time. */
  timeout?: RetryStrategy | RetryStrategyConfig;
}

/**
 * The strategies resolved, one per retriable class, and the operation's cap: `maxRetries`
 * (the `retry` strategy's) bounds an operation's retries whatever their classes; a
 * strategy's own `maxRetries`, never above it, bounds the retries it answered for.
 */
export interface ClassBackoff {
  readonly maxRetries: number;
  readonly throttled: RetryStrategy;
  readonly transient: RetryStrategy;
  readonly timeout: RetryStrategy;
  /**
   * For each class, the first class with the same strategy object: retries are numbered per
   * strategy, so classes that share one (those left out share `retry`) share its count and
   * its previous wait, exactly as with one strategy for all.
   */
  readonly countedWith: Readonly<Record<RetriableClass, RetriableClass>>;
}

/**
 * Validates `backoff` (undefined: every class uses `retry`) against the policy's `retry`
 * strategy, once, when the policy is made. Errors name the class: `backoff.transient...`.
 */
export function resolveBackoffByClass(retry: RetryStrategy, option: unknown, name = "backoff"): ClassBackoff {
  if (option === undefined) return plan(retry.maxRetries, retry, retry, retry);
  const strategy = (value: unknown, path: string): RetryStrategy => (value === undefined ? retry : classStrategy(path, value, retry.maxRetries));
  const shape: Record<RetriableClass, typeof strategy> = { throttled: strategy, transient: strategy, timeout: strategy };
  const byClass = optionsObject(shape, { expected: "an object with throttled, transient or timeout strategies" })(option, name);
  return plan(retry.maxRetries, byClass.throttled, byClass.transient, byClass.timeout);
}

function plan(maxRetries: number, throttled: RetryStrategy, transient: RetryStrategy, timeout: RetryStrategy): ClassBackoff {
  const countedWith = {
    throttled: "throttled",
    transient: transient === throttled ? "throttled" : "transient",
    timeout: timeout === throttled ? "throttled" : timeout === transient ? "transient" : "timeout",
  } as const;
  return { maxRetries, throttled, transient, timeout, countedWith };
}

/** One class's strategy: a config without `maxRetries` takes the operation's cap; none may exceed it. */
function classStrategy(name: string, value: unknown, cap: number): RetryStrategy {
  const withCap =
    isRecord(value) && value.strategy !== undefined && value.strategy !== "none" && value.maxRetries === undefined ? { ...value, maxRetries: cap } : value;
  const strategy = createRetryStrategy(withCap as RetryStrategy | RetryStrategyConfig, name);
  if (strategy.maxRetries > cap) {
    throw new RangeError(`${name}.maxRetries (${strategy.maxRetries}) must not exceed retry.maxRetries (${cap}), which caps every operation's retries.`);
  }
  return strategy;
}

