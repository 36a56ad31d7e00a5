// The one way options are checked: each options object is described once, as a shape of checks,
// and checked wherever it sits, its errors naming each option by the path the caller wrote
// (`circuitBreaker.pacing.decreaseFactor`). Own code rather than zod or valibot: every message
// here is ours (the path first, TypeError or RangeError, the value described without secrets),
// so a library would only walk the object, and would cost a runtime dependency of 1.8 kB (valibot)
// to 7-23 kB (zod mini, zod) gzipped, plus a layer mapping its issues back to these messages.
import { describeValue } from "./describeValue.js";

/**
 * Checks the option found at `path` (`""` for a factory's own options) and returns what the
 * code reads: the value, its default applied, or what is made from it. Throws a `TypeError`
 * or `RangeError` whose message starts with `path`.
 */
export type OptionCheck<T> = (value: unknown, path: string) => T;

/** A shape that checks every option of `T` and no other: the compiler holds the options' interface and their checks together. */
export type OptionsShape<T> = { [K in keyof Required<T>]: OptionCheck<unknown> };

/** What each check of a shape returns: an options object after checking. */
export type CheckedOptions<S extends Record<string, OptionCheck<unknown>>> = { [K in keyof S]: ReturnType<S[K]> };

/** How an options object is named in its errors. */
export interface OptionsNaming {
  /** The object's name when it is a factory's own (path `""`): `"exponentialBackoff options"`. Defaults to `"options"`. */
  root?: string;
  /**
   * Whose options they are, for an unknown key: `"... is not a known option of exponentialBackoff"`, or a
   * function of the path for options that may sit under another option (`retry (an exponential backoff)`,
   * the path the user wrote). Defaults to none.
   */
  owner?: string | ((path: string) => string);
  /** What the option must be when it is not an object: `"false or an options object"`. Defaults to `"an object"`. */
  expected?: string;
  /** Options that were removed, each with the error's text after its path (what to use instead). */
  removed?: Readonly<Record<string, string>>;
}

/**
 * An options object: an object (not null, not an array) whose every key is in `shape`, each checked by its own
 * check at its path, in the shape's order (the first error is thrown), then `across` them all
 * (`min` not above `max`; `at` names a key by its path). `undefined` is not an object: a caller
 * whose options may be left out passes `{}` for them.
 */
export function optionsObject<S extends Record<string, OptionCheck<unknown>>>(
  shape: S,
  naming: OptionsNaming = {},
  across?: (checked: CheckedOptions<S>, at: (key: keyof S & string) => string) => void,
): OptionCheck<CheckedOptions<S>> {
  const known = Object.keys(shape);
  const { root = "options", owner, expected = "an object", removed = {} } = naming;
  return (value, path) => {
    if (!isRecord(value)) throw new TypeError(`${path || root} must be ${expected}; got ${describeValue(value)}.`);
    for (const key of Object.keys(removed)) {
      if (key in value) throw new TypeError(`${optionPath(path, key)} ${removed[key]}`);
    }
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) {
        const of = owner === undefined ? "" : ` of ${typeof owner === "function" ? owner(path) : owner}`;
        const guess = closestKnown(key, known);
        const start = guess === undefined ? "known" : `did you mean ${guess}? Known`;
        throw new TypeError(`${optionPath(path, key)} is not a known option${of}; ${start} options are ${known.join(", ")}.`);
      }
    }
    const checked: Record<string, unknown> = {};
    for (const key of known) checked[key] = (shape[key] as OptionCheck<unknown>)(value[key], optionPath(path, key));
    across?.(checked as CheckedOptions<S>, (key) => optionPath(path, key));
    return checked as CheckedOptions<S>;
  };
}

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
  /** Whether 0 is accepted below `min` (for "none": `tryTimeoutInMs: 0`). Defaults to false. */
  allowZero?: boolean;
}

/** A number within `bounds`; left out (`undefined`: `null` is a mistake to name), it is `fallback`. */
export function numberOption(bounds: NumberOptionBounds, fallback: number): OptionCheck<number>;
/** A number within `bounds`, or `undefined` when left out. */
export function numberOption(bounds: NumberOptionBounds): OptionCheck<number | undefined>;
export function numberOption(bounds: NumberOptionBounds, fallback?: number): OptionCheck<number | undefined> {
  return (value, path) => (value === undefined ? fallback : validateNumberOption(path, value, bounds));
}

/** One of `allowed`, or `undefined` when left out. */
export function choiceOption<T extends string>(allowed: readonly T[]): OptionCheck<T | undefined> {
  return (value, path) => (value === undefined ? undefined : validateChoiceOption(path, value, allowed));
}

/**
 * A value that passes `test` (a function, a breaker, a registry); left out, it is `fallback`.
 * Otherwise a `TypeError`: "`path` must be `expected`; got ...".
 */
export function optionWhere<T>(test: (value: unknown) => boolean, expected: string, fallback: T): OptionCheck<T>;
/** A value that passes `test`, or `undefined` when left out. */
export function optionWhere<T>(test: (value: unknown) => boolean, expected: string): OptionCheck<T | undefined>;
export function optionWhere<T>(test: (value: unknown) => boolean, expected: string, fallback?: T): OptionCheck<T | undefined> {
  return (value, path) => {
    if (value === undefined) return fallback;
    if (!test(value)) throw new TypeError(`${path} must be ${expected}; got ${describeValue(value)}.`);
    return value as T;
  };
}

/** For {@link optionWhere}: an object with these methods (duck-typed: another copy of the package, or a test, makes one too). */
export function hasMethods(...names: string[]): (value: unknown) => boolean {
  return (value) => isRecord(value) && names.every((name) => typeof value[name] === "function");
}

/** For {@link optionWhere}: any function. */
export const isFunction = (value: unknown): boolean => typeof value === "function";

/** An object that is not null nor an array (a class instance is one): what an options object must be. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Checks one numeric option and throws an error naming it and the value it got:
 * `TypeError` for a non-number (null and BigInt included) or NaN, `RangeError` for a number
 * out of bounds.
 * An option named `...InMs` takes whole milliseconds (timers count no fraction of one): `0.5`, or a
 * value under `min` whose thousandfold fits (`tryTimeoutInMs: 5`), is in seconds, and the error says so.
 */
export function validateNumberOption(name: string, value: unknown, bounds: NumberOptionBounds = {}): number {
  const { min = 0, max = Number.MAX_SAFE_INTEGER, integer = false, allowInfinity = false, allowZero = false } = bounds;
  if (typeof value !== "number" || Number.isNaN(value)) {
    throw new TypeError(`${name} must be a number; got ${describeValue(value)}.`);
  }
  if (value === Infinity && allowInfinity) return value;
  if (!Number.isFinite(value)) {
    throw new RangeError(`${name} must be a finite number; got ${value}.`);
  }
  if (value === 0 && allowZero) return value;
  const inMs = name.endsWith("InMs");
  const thousandfold = Math.round(value * 1000);
  const hint = inMs && value > 0 && thousandfold >= min && thousandfold <= max ? ` (milliseconds, not seconds: for ${value} s, write ${thousandfold})` : "";
  if ((integer || inMs) && !Number.isInteger(value)) {
    throw new RangeError(`${name} must be ${inMs ? "a whole number of milliseconds" : "an integer"}; got ${value}${hint}.`);
  }
  if (value < min || value > max) {
    throw new RangeError(`${name} must be ${allowZero ? "0 or " : ""}between ${min} and ${max}; got ${value}${hint}.`);
  }
  return value;
}

/** Throws a `TypeError` naming the option unless `value` is one of `allowed` (null never is). */
export function validateChoiceOption<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new TypeError(`${name} must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}; got ${describeValue(value)}.`);
  }
  return value as T;
}

/**
 * The known option nearest to a misspelt `key`, case aside, within half the longer name's length; one
 * with `key`'s first letter before the others (typos keep it: `retries` is `retry`, not `metrics`).
 */
function closestKnown(key: string, known: readonly string[]): string | undefined {
  const near = known.filter((name) => editDistance(key, name) <= Math.max(key.length, name.length) / 2);
  const sameStart = near.filter((name) => name[0]?.toLowerCase() === key[0]?.toLowerCase());
  return (sameStart.length > 0 ? sameStart : near).sort((a, b) => editDistance(key, a) - editDistance(key, b))[0];
}

/** Levenshtein distance, case aside. Ours, not fastest-levenshtein: a dependency for ten lines run only on a misspelt option. */
function editDistance(a: string, b: string): number {
  [a, b] = [a.toLowerCase(), b.toLowerCase()];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/** The dotted path of `key` under `parent` (`retry` + `maxRetries` is `retry.maxRetries`); a factory's own options have no parent. */
function optionPath(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}
