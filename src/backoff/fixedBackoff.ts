import { strategyOf, strategyOwnerAt, type RetryStrategy } from "./retryStrategy.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { numberOption, optionsObject, type OptionsShape } from "../validation/optionSchema.js";

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

/** Checks {@link fixedBackoff}'s options where they sit (`retry` for a config by name), with the defaults applied. */
export const resolveFixedBackoffOptions = optionsObject(
  {
    maxRetries: numberOption({ integer: true, max: 1000 }, DEFAULT_FIXED_BACKOFF.maxRetries),
    delayInMs: numberOption({ max: DAY_IN_MS }, DEFAULT_FIXED_BACKOFF.delayInMs),
  } satisfies OptionsShape<FixedBackoffOptions>,
  { root: "fixedBackoff options", owner: (path) => strategyOwnerAt(path, "fixedBackoff", "a fixed backoff") },
);

/**
 * Fixed backoff: `maxRetries` retries, each after the same wait. Better than none, but
 * clients that wait the same time collide again; prefer {@link exponentialBackoff}.
 */
export function fixedBackoff(options: FixedBackoffOptions = {}): RetryStrategy {
  const { maxRetries, delayInMs: delay } = resolveFixedBackoffOptions(options, "");
  return strategyOf("fixed", maxRetries, delay, () => delay);
}
