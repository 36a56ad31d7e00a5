import { describeValue } from "./describeValue.js";

/** Bounds accepted by {@link validateNumberOption}. */
export interface NumberOptionBounds {
  /** Smallest accepted value (inclusive). Defaults to 0. */
  min?: number;
  /** Largest accepted value (inclusive). Defaults to `Number.MAX_SAFE_INTEGER`. */
  max?: number;
  /** Whether the value must be an integer. Defaults to false. */
  integer?: boolean;
  /** Whether `Infinity` is accepted (for "no limit"). Defaults to false. */
  allowInfinity?: boolean;
}

/**
 * Checks one numeric option and throws an error naming it and the value it got:
 * `TypeError` for a non-number (null and BigInt included) or NaN, `RangeError` for a number
 * out of bounds. Returns the value so call sites read `const x = validateNumberOption("x", options.x, ...)`.
 */
export function validateNumberOption(name: string, value: unknown, bounds: NumberOptionBounds = {}): number {
  const { min = 0, max = Number.MAX_SAFE_INTEGER, integer = false, allowInfinity = false } = bounds;
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new TypeError(`${name} must be a number; got ${describeValue(value)}.`);
  }
  if (value === Infinity && allowInfinity) return value;
  if (!Number.isFinite(value)) {
    throw new RangeError(`${name} must be a finite number; got ${value}.`);
  }
  if (integer && !Number.isInteger(value)) {
    throw new RangeError(`${name} must be an integer; got ${value}.`);
  }
  if (value < min || value > max) {
    throw new RangeError(`${name} must be between ${min} and ${max}; got ${value}.`);
  }
  return value;
}

/**
 * Like {@link validateNumberOption}, but `undefined` (only: `null` is a mistake to name)
 * stands for the default.
 */
export function optionalNumberOption(
  name: string,
  value: unknown,
  fallback: number,
  bounds: NumberOptionBounds = {},
): number {
  return value === undefined ? validateNumberOption(name, fallback, bounds) : validateNumberOption(name, value, bounds);
}
