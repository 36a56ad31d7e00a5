import type { RandomSource } from "./retryStrategy.js";
import { describeValue } from "../validation/describeValue.js";

/**
 * Pins one draw into [0, 1]: below 0 reads as 0, above 1 as 1, and what is not a finite
 * number (NaN, Infinity, a string) as 0.5, the middle of the range. Pure.
 */
export function clampUnitRandom(value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return 0.5;
  return value < 0 ? 0 : value > 1 ? 1 : value;
}

/**
 * Validates a `random` option once and returns a source whose every answer is in [0, 1],
 * whatever the user's function returns. Clamped where it enters, not at each use: a wait
 * computed from NaN or a negative draw becomes a 1 ms timer that polls (and outlives its
 * deadline). `undefined` and `Math.random` give `Math.random` itself.
 */
export function resolveRandomSource(name: string, random: unknown): RandomSource {
  if (random === undefined || random === Math.random) return Math.random;
  if (typeof random !== "function") {
    throw new TypeError(`${name} must be a function returning a number in [0, 1]; got ${describeValue(random)}.`);
  }
  const source = random as () => unknown;
  return () => clampUnitRandom(source());
}
