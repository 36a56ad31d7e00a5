/**
 * A short, secret-free description of a bad option value for an error message. Never
 * throws: a BigInt, a symbol or a proxy is described, not serialised.
 */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "function") return "a function";
  if (Array.isArray(value)) return "an array";
  return "an object";
}
