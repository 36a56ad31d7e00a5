import { clampUnitRandom, strategyOf, resolveRandomSource, strategyOwnerAt, type RetryStrategy } from "./retryStrategy.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { numberOption, optionsObject, type OptionsShape } from "../validation/optionSchema.js";

/** Options of {@link decorrelatedJitterBackoff}. */
export interface DecorrelatedJitterBackoffOptions {
  /** Retries after the first attempt. Defaults to 6. */
  maxRetries?: number;
  /** `base`, the shortest wait and the first retry's scale, in milliseconds. Defaults to 800. */
  baseDelayInMs?: number;
  /** `cap`, the longest wait, in milliseconds. Defaults to 10000. */
  maxDelayInMs?: number;
  /** Uniform random source in [0, 1]; answers outside it are clamped (NaN reads as 0.5). Defaults to `Math.random`; tests pin it. */
  random?: () => number;
}

/** Defaults of {@link decorrelatedJitterBackoff}: the exponential defaults' scale, so switching strategies keeps the waits' order of magnitude. */
export const DEFAULT_DECORRELATED_JITTER_BACKOFF: Readonly<Required<Omit<DecorrelatedJitterBackoffOptions, "random">>> =
  Object.freeze({
    maxRetries: 6,
    baseDelayInMs: 800,
    maxDelayInMs: 10_000,
  });

const d = DEFAULT_DECORRELATED_JITTER_BACKOFF;
/** Checks {@link decorrelatedJitterBackoff}'s options where they sit (`retry` for a config by name), with the defaults applied. */
export const resolveDecorrelatedJitterBackoffOptions = optionsObject(
  {
    maxRetries: numberOption({ integer: true, max: 1000 }, d.maxRetries),
    // At least 1 ms: each wait is drawn up to 3x the last, so a base of 0 would retry at once for ever.
    baseDelayInMs: numberOption({ min: 1, max: DAY_IN_MS }, d.baseDelayInMs),
    maxDelayInMs: numberOption({ max: DAY_IN_MS }, d.maxDelayInMs),
    random: (value, path) => resolveRandomSource(path, value),
  } satisfies OptionsShape<DecorrelatedJitterBackoffOptions>,
  { root: "decorrelatedJitterBackoff options", owner: (path) => strategyOwnerAt(path, "decorrelatedJitterBackoff", "a decorrelated jitter backoff") },
  (o, at) => {
    if (o.baseDelayInMs > o.maxDelayInMs) {
      throw new RangeError(`${at("baseDelayInMs")} (${o.baseDelayInMs}) must not exceed ${at("maxDelayInMs")} (${o.maxDelayInMs}).`);
    }
  },
);

/**
 * "Decorrelated jitter" from AWS's "Exponential Backoff And Jitter": each wait is drawn from
 * `[base, 3 * previous wait]`, the first previous wait being `base`, and capped. Drawn from
 * `[base, min(cap, 3 * previous)]` rather than clamped after the draw (AWS's
 * `min(cap, Rand(...))`): clamping puts a share of all waits at exactly the cap, where
 * clients meet again (Polly issue 530). Each wait depends on the last one, not on the retry
 * number, so clients that failed together drift apart. Its state, the
 * previous wait, is the caller's: the retry policy keeps it per operation and passes it
 * back as `previousDelayInMs`, so one strategy object serves every operation at once.
 */
export function decorrelatedJitterBackoff(options: DecorrelatedJitterBackoffOptions = {}): RetryStrategy {
  const { maxRetries, baseDelayInMs: base, maxDelayInMs: max, random } = resolveDecorrelatedJitterBackoffOptions(options, "");
  return strategyOf("decorrelated", maxRetries, max, (_, previousDelayInMs) => decorrelatedDelayInMs(previousDelayInMs, { base, max, randomValue: random() }));
}

/**
 * The formula itself, pure: `randomValue` in [0, 1] picks the point in [base, 3 * previous]
 * (a previous wait under `base`, or none, reads as `base`). Whole milliseconds, always in [base, max].
 */
export function decorrelatedDelayInMs(previousDelayInMs: number, p: { base: number; max: number; randomValue: number }): number {
  const previous = Number.isFinite(previousDelayInMs) && previousDelayInMs > p.base ? previousDelayInMs : p.base;
  const high = Math.min(previous * 3, p.max);
  const y = p.base + clampUnitRandom(p.randomValue) * (high - p.base);
  // Whole milliseconds (timers take no less), clamped so rounding cannot leave [base, max].
  return Math.min(Math.max(Math.round(y), p.base), p.max);
}
