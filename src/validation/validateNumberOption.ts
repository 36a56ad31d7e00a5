/** The longest wait, timeout or deadline any option accepts: one day. */
export const DAY_IN_MS = 24 * 3600_000;

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
 * `TypeError` for a non-number or NaN, `RangeError` for a number out of bounds.
 * Returns the value so call sites read `const x = validateNumberOption("x", options.x, ...)`.
 */
export function validateNumberOption(name: string, value: unknown, bounds: NumberOptionBounds = {}): number {
  const { min = 0, max = Number.MAX_SAFE_INTEGER, integer = false, allowInfinity = false } = bounds;
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new TypeError(`${name} must be a number; got ${describe(value)}.`);
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

/** Like {@link validateNumberOption}, but `undefined` passes through as the default. */
export function optionalNumberOption(
  name: string,
  value: unknown,
  fallback: number,
  bounds: NumberOptionBounds = {},
): number {
  return value === undefined ? validateNumberOption(name, fallback, bounds) : validateNumberOption(name, value, bounds);
}

/** Throws a `TypeError` naming the option unless `value` is one of `allowed`. */
export function validateChoiceOption<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new TypeError(`${name} must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}; got ${describe(value)}.`);
  }
  return value as T;
}

/** Throws a `TypeError` naming the option unless `value` is a plain object (or undefined when optional). */
export function validateObjectOption(name: string, value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object; got ${describe(value)}.`);
  }
  return value as Record<string, unknown>;
}

/** Throws a `TypeError` naming any key of `options` that is not in `known`: a typo must not pass silently. */
export function rejectUnknownKeys(name: string, options: object, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new TypeError(`${name}.${key} is not a known option; known options are ${known.join(", ")}.`);
    }
  }
}

/** A short, secret-free description of a bad value for an error message. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "number" || typeof value === "boolean" || typeof value === "bigint") return String(value);
  if (typeof value === "string") return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  return "an object";
}
