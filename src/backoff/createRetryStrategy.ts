import { decorrelatedJitterBackoff, type DecorrelatedJitterBackoffOptions } from "./decorrelatedJitterBackoff.js";
import { exponentialBackoff, type ExponentialBackoffOptions } from "./exponentialBackoff.js";
import { fixedBackoff, type FixedBackoffOptions } from "./fixedBackoff.js";
import { noRetry } from "./noRetry.js";
import type { RetryStrategy } from "./retryStrategy.js";
import { describeValue } from "../validation/describeValue.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";

/** A strategy described by name and numbers, as it would sit in a configuration file. */
export type RetryStrategyConfig =
  | { strategy: "none" }
  | ({ strategy: "fixed" } & FixedBackoffOptions)
  | ({ strategy: "exponential" } & ExponentialBackoffOptions)
  | ({ strategy: "decorrelated" } & DecorrelatedJitterBackoffOptions);

/** True for an object that already is a {@link RetryStrategy}. */
export function isRetryStrategy(value: unknown): value is RetryStrategy {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as RetryStrategy).delayInMs === "function" &&
    typeof (value as RetryStrategy).maxRetries === "number" &&
    // A config (`{ strategy: "fixed", delayInMs: ... }`) is never a strategy object, whatever its fields hold.
    (value as { strategy?: unknown }).strategy === undefined
  );
}

/**
 * Turns a strategy object or a {@link RetryStrategyConfig} into a strategy, validating
 * every number; `name` prefixes error messages (for example "retry").
 */
export function createRetryStrategy(config: RetryStrategy | RetryStrategyConfig, name = "retry"): RetryStrategy {
  if (isRetryStrategy(config)) return config;
  if (typeof config !== "object" || config === null) {
    throw new TypeError(`${name} must be a retry strategy or { strategy: "none" | "fixed" | "exponential" | "decorrelated", ... }; got ${describeValue(config)}.`);
  }
  const { strategy, ...numbers } = config as { strategy: unknown } & Record<string, unknown>;
  switch (validateChoiceOption(`${name}.strategy`, strategy, ["none", "fixed", "exponential", "decorrelated"] as const)) {
    case "none":
      if (Object.keys(numbers).length > 0) {
        throw new TypeError(`${name}: strategy "none" takes no other options; got ${Object.keys(numbers).join(", ")}.`);
      }
      return noRetry();
    case "fixed":
      return named(name, () => fixedBackoff(numbers as FixedBackoffOptions));
    case "exponential":
      return named(name, () => exponentialBackoff(numbers as ExponentialBackoffOptions));
    case "decorrelated":
      return named(name, () => decorrelatedJitterBackoff(numbers as DecorrelatedJitterBackoffOptions));
  }
}

/**
 * Runs `make`, prefixing its validation errors with the option's path (`retry: maxDelayInMs
 * must be ...`), so an error from a config says which option it is about; the strategy
 * functions themselves name their own options bare, as their callers pass them.
 */
export function named<T>(name: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    if (error instanceof RangeError && !error.message.startsWith(name)) throw new RangeError(`${name}: ${error.message}`, { cause: error });
    if (error instanceof TypeError && !error.message.startsWith(name)) throw new TypeError(`${name}: ${error.message}`, { cause: error });
    throw error;
  }
}
