import {
  decorrelatedJitterBackoff,
  resolveDecorrelatedJitterBackoffOptions,
  type DecorrelatedJitterBackoffOptions,
} from "./decorrelatedJitterBackoff.js";
import { exponentialBackoff, resolveExponentialBackoffOptions, type ExponentialBackoffOptions } from "./exponentialBackoff.js";
import { fixedBackoff, resolveFixedBackoffOptions, type FixedBackoffOptions } from "./fixedBackoff.js";
import type { RetryStrategy } from "./retryStrategy.js";
import { describeValue } from "../validation/describeValue.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { isRecord, validateChoiceOption, validateNumberOption } from "../validation/optionSchema.js";

/** A strategy described by name and numbers, as it would sit in a configuration file. */
export type RetryStrategyConfig =
  | { strategy: "none" }
  | ({ strategy: "fixed" } & FixedBackoffOptions)
  | ({ strategy: "exponential" } & ExponentialBackoffOptions)
  | ({ strategy: "decorrelated" } & DecorrelatedJitterBackoffOptions);

/**
 * The "no retry" strategy: fail at the first error (`{ strategy: "none" }`). Simple, but risks
 * losing data (see docs/retry.md).
 */
export function noRetry(): RetryStrategy {
  return { kind: "none", maxRetries: 0, maxDelayInMs: 0, delayInMs: () => 0 };
}

/** True for an object that already is a {@link RetryStrategy}. */
export function isRetryStrategy(value: unknown): value is RetryStrategy {
  // A config (`{ strategy: "fixed", delayInMs: ... }`) is never a strategy object, whatever its fields hold.
  return isRecord(value) && typeof value.delayInMs === "function" && typeof value.maxRetries === "number" && value.strategy === undefined;
}

/**
 * Turns a strategy object or a {@link RetryStrategyConfig} into a strategy, validating
 * every number; errors name each option by its path under `name` (`retry.maxRetries`).
 */
export function createRetryStrategy(config: RetryStrategy | RetryStrategyConfig, name = "retry"): RetryStrategy {
  if (isRetryStrategy(config)) {
    // A strategy object from a user is checked like our own: a bad one must not loop forever.
    validateNumberOption(`${name}.maxRetries`, config.maxRetries, { integer: true, max: 1_000_000 });
    validateNumberOption(`${name}.maxDelayInMs`, config.maxDelayInMs, { max: DAY_IN_MS });
    return config;
  }
  if (typeof config !== "object" || config === null) {
    throw new TypeError(`${name} must be a retry strategy or { strategy: "none" | "fixed" | "exponential" | "decorrelated", ... }; got ${describeValue(config)}.`);
  }
  const { strategy, ...numbers } = config as { strategy: unknown } & Record<string, unknown>;
  // Each config is checked where it sits first, so that errors name `retry.delayInMs`; the factory's own check then passes.
  switch (validateChoiceOption(`${name}.strategy`, strategy, ["none", "fixed", "exponential", "decorrelated"] as const)) {
    case "none":
      if (Object.keys(numbers).length > 0) {
        const [first] = Object.keys(numbers);
        throw new TypeError(`${name}.${first} is not an option of strategy "none", which takes no other options; got ${Object.keys(numbers).join(", ")}.`);
      }
      return noRetry();
    case "fixed":
      resolveFixedBackoffOptions(numbers, name);
      return fixedBackoff(numbers as FixedBackoffOptions);
    case "exponential":
      resolveExponentialBackoffOptions(numbers, name);
      return exponentialBackoff(numbers as ExponentialBackoffOptions);
    case "decorrelated":
      resolveDecorrelatedJitterBackoffOptions(numbers, name);
      return decorrelatedJitterBackoff(numbers as DecorrelatedJitterBackoffOptions);
  }
}
