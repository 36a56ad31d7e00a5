import { describeValue } from "./describeValue.js";

/** Throws a `TypeError` naming the option unless `value` is a plain object (not null, not an array). */
export function validateObjectOption(name: string, value: unknown): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new TypeError(`${name} must be an object; got ${describeValue(value)}.`);
  }
  return value as Record<string, unknown>;
}
