import { clampUnitRandom, strategyOf, resolveRandomSource, strategyOwnerAt, type RetryStrategy } from "./retryStrategy.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { numberOption, optionsObject, type OptionsShape } from "../validation/optionSchema.js";

/** Options of {@link exponentialBackoff}; the letters are those of the storage guidance's formula. */
export interface ExponentialBackoffOptions {
  /** Retries after the first attempt. Defaults to 6. */
  maxRetries?: number;
  /** `z`, the default backoff, in milliseconds. Defaults to 800. */
  baseDelayInMs?: number;
  /** `zmin`, added to every wait, in milliseconds. Defaults to 100. */
  minDelayInMs?: number;
  /** `zmax`, the cap on every wait, in milliseconds. Defaults to 10000. */
  maxDelayInMs?: number;
  /** `j`, the random variance: `z` is drawn from [(1-j)z, (1+j)z]. In [0, 1). Defaults to 0.2 (±20 %). */
  jitter?: number;
  /** Uniform random source in [0, 1]; answers outside it are clamped (NaN reads as 0.5). Defaults to `Math.random`; tests pin it. */
  random?: () => number;
}

/** Defaults of {@link exponentialBackoff}: ride out a partition offline for 10 s within about 15-20 s. */
export const DEFAULT_EXPONENTIAL_BACKOFF: Readonly<Required<Omit<ExponentialBackoffOptions, "random">>> =
  Object.freeze({
    maxRetries: 6,
    baseDelayInMs: 800,
    minDelayInMs: 100,
    maxDelayInMs: 10_000,
    jitter: 0.2,
  });

const d = DEFAULT_EXPONENTIAL_BACKOFF;
/** Checks {@link exponentialBackoff}'s options where they sit (`retry` for a config by name), with the defaults applied. */
export const resolveExponentialBackoffOptions = optionsObject(
  {
    maxRetries: numberOption({ integer: true, max: 1000 }, d.maxRetries),
    baseDelayInMs: numberOption({ max: DAY_IN_MS }, d.baseDelayInMs),
    minDelayInMs: numberOption({ max: DAY_IN_MS }, d.minDelayInMs),
    maxDelayInMs: numberOption({ max: DAY_IN_MS }, d.maxDelayInMs),
    jitter: numberOption({ max: 0.999_999 }, d.jitter),
    random: (value, path) => resolveRandomSource(path, value),
  } satisfies OptionsShape<ExponentialBackoffOptions>,
  { root: "exponentialBackoff options", owner: (path) => strategyOwnerAt(path, "exponentialBackoff", "an exponential backoff") },
  (o, at) => {
    if (o.minDelayInMs > o.maxDelayInMs) {
      throw new RangeError(`${at("minDelayInMs")} (${o.minDelayInMs}) must not exceed ${at("maxDelayInMs")} (${o.maxDelayInMs}).`);
    }
  },
);

/**
 * Randomised exponential backoff as the Azure storage guidance prescribes:
 * `y = Rand((1-j)z, (1+j)z) * (2^x - 1); y = min(zmin + y, zmax)` with `x` the retry number.
 * The multiplicative jitter keeps a floor under every wait (unlike "full jitter"), so early
 * retries do not land in a partition that is still being moved.
 */
export function exponentialBackoff(options: ExponentialBackoffOptions = {}): RetryStrategy {
  const { maxRetries, baseDelayInMs: base, minDelayInMs: min, maxDelayInMs: max, jitter, random } = resolveExponentialBackoffOptions(options, "");
  return strategyOf("exponential", maxRetries, max, (retryNumber) => exponentialDelayInMs(retryNumber, { base, min, max, jitter, randomValue: random() }));
}

/**
 * The formula itself, pure: `randomValue` in [0, 1] picks the point in the jitter range
 * (0 = low end `(1-j)z`, 1 = high end `(1+j)z`). Whole milliseconds, always in [min, max].
 */
export function exponentialDelayInMs(
  retryNumber: number,
  p: { base: number; min: number; max: number; jitter: number; randomValue: number },
): number {
  const r = clampUnitRandom(p.randomValue);
  const factor = p.base * (1 - p.jitter + 2 * p.jitter * r);
  // 2^x overflows to Infinity past x = 1023; the wait is capped long before that anyway.
  const growth = retryNumber >= 64 ? Infinity : 2 ** retryNumber - 1;
  const y = factor === 0 ? 0 : factor * growth;
  // Whole milliseconds (timers take no less), clamped again so rounding cannot leave [min, max].
  return Math.min(Math.max(Math.round(Math.min(p.min + y, p.max)), p.min), p.max);
}
