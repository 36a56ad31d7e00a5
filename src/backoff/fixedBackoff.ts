import { checkRetryNumber, strategyOwnerAt, type RetryStrategy } from "./retryStrategy.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { optionalNumberOption } from "../validation/validateNumberOption.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";
import { optionPath } from "../validation/optionPath.js";

/** Options of {@link fixedBackoff}. */
export interface FixedBackoffOptions {
  /** Retries after the first attempt. Defaults to 3. */
  maxRetries?: number;
  /** The same wait before every retry, in milliseconds. Defaults to 1000. */
  delayInMs?: number;
}

/** Defaults of {@link fixedBackoff}. */
export const DEFAULT_FIXED_BACKOFF: Readonly<Required<FixedBackoffOptions>> = Object.freeze({
  maxRetries: 3,
  delayInMs: 1000,
});

/**
 * Fixed backoff: `maxRetries` retries, each after the same wait. Better than none, but
 * clients that wait the same time collide again; prefer {@link exponentialBackoff}.
 */
export function fixedBackoff(options: FixedBackoffOptions = {}): RetryStrategy {
  return fixedBackoffAt("", options);
}

/** {@link fixedBackoff} for options found at `path` (`retry`, `backoff.throttled`): errors name their full path. */
export function fixedBackoffAt(path: string, options: FixedBackoffOptions): RetryStrategy {
  validateObjectOption(path || "fixedBackoff options", options);
  rejectUnknownKeys(path, options, ["maxRetries", "delayInMs"], strategyOwnerAt(path, "fixedBackoff", "fixed"));
  const maxRetries = optionalNumberOption(optionPath(path, "maxRetries"), options.maxRetries, DEFAULT_FIXED_BACKOFF.maxRetries, {
    integer: true,
    max: 1000,
  });
  const delay = optionalNumberOption(optionPath(path, "delayInMs"), options.delayInMs, DEFAULT_FIXED_BACKOFF.delayInMs, {
    max: DAY_IN_MS,
  });
  return {
    kind: "fixed",
    maxRetries,
    maxDelayInMs: delay,
    delayInMs(retryNumber: number): number {
      checkRetryNumber(retryNumber);
      return delay;
    },
  };
}
