import { describeValue } from "./describeValue.js";

/** Throws a `TypeError` naming the option unless `value` is one of `allowed` (null never is). */
export function validateChoiceOption<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw new TypeError(`${name} must be one of ${allowed.map((a) => JSON.stringify(a)).join(", ")}; got ${describeValue(value)}.`);
  }
  return value as T;
}
