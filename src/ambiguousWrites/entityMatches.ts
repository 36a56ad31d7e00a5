// Comparing what a write sent with what a read-back found, property by property and type
// by type (pure). Both sides are Tables JSON: a value, and for types JSON cannot tell
// apart an `Name@odata.type` annotation (Edm.Int64, Edm.DateTime, Edm.Guid, Edm.Binary,
// Edm.Double given as text). Unannotated values are typed as the service infers them (see
// {@link inferEdmType}). Any doubt reads as "different": the caller then gets the original
// error, marked possibly applied, never a false success.
import { parseJsonObject } from "../address/tableWrite.js";

/**
 * A JSON number with the text it was written as. Tables JSON tells Edm.Int32 from an
 * unannotated Edm.Double by that text alone: the service and Azurite send a whole-number
 * Double as `5.0`, which `JSON.parse` turns into the same `5` as an Int32.
 */
class JsonNumberLiteral {
  /**
   * @param value - The number.
   * @param source - Its text in the JSON (`"5.0"`, `"1e+21"`); undefined where the engine
   * does not give it to a reviver (Node 22 and later do).
   */
  constructor(
    readonly value: number,
    readonly source: string | undefined,
  ) {}
}

/** What a JSON.parse reviver gets as its third argument where the engine supports it. */
interface ReviverContext {
  source?: string;
}

/** Parses a Tables JSON entity as {@link parseJsonObject} does, keeping every number as a {@link JsonNumberLiteral}. */
export function parseEntityJson(text: string | undefined): Record<string, unknown> | undefined {
  return parseJsonObject(text, keepNumberLiteral as (key: string, value: unknown) => unknown);
}

function keepNumberLiteral(_key: string, value: unknown, context?: ReviverContext): unknown {
  return typeof value === "number" ? new JsonNumberLiteral(value, context?.source) : value;
}

/** Service-managed and metadata properties, never compared. */
const IGNORED = new Set(["Timestamp"]);
const ANNOTATION = "@odata.type";

/** The user properties of a Tables JSON entity (PartitionKey and RowKey included), typed. Nulls count as absent. */
function typedProperties(entity: Record<string, unknown>): Map<string, TypedValue> {
  const result = new Map<string, TypedValue>();
  for (const [name, raw] of Object.entries(entity)) {
    if (IGNORED.has(name) || name.startsWith("odata.") || name.includes("@odata.")) continue;
    if (raw === null || raw === undefined) continue;
    const annotation = entity[name + ANNOTATION];
    const type = typeof annotation === "string" ? annotation : inferEdmType(raw);
    result.set(name, { type, value: canonicalEdmValue(type, raw) });
  }
  return result;
}

/**
 * True when the stored entity holds exactly what was sent (an insert's read-back): the same
 * properties, each of the same type and value, and no others. Pass each side as the JSON text
 * that went over the wire where you have it, or as {@link parseEntityJson} read it: a
 * whole-number Double arrives as `5.0`, which only the text tells apart from the Int32 `5` (an
 * object from `JSON.parse` has lost it and reads as Int32). Text that does not parse as a JSON
 * object matches nothing.
 */
export function entityMatches(sent: Record<string, unknown> | string, stored: Record<string, unknown> | string): boolean {
  const sentEntity = typeof sent === "string" ? parseEntityJson(sent) : sent;
  const storedEntity = typeof stored === "string" ? parseEntityJson(stored) : stored;
  if (sentEntity === undefined || storedEntity === undefined) return false;
  const want = typedProperties(sentEntity);
  const have = typedProperties(storedEntity);
  if (want.size !== have.size) return false;
  for (const [name, value] of want) {
    const found = have.get(name);
    if (value.value === undefined || found === undefined || found.type !== value.type || found.value !== value.value) return false;
  }
  return true;
}

/**
 * One property's Tables type and canonical value, as compared after a read-back (pure).
 * `value` is undefined when the raw value cannot be read as its type (an unknown type, a
 * malformed DateTime, Guid, Base64 or number): such a value never equals anything, so any
 * doubt reads as "different".
 */
export interface TypedValue {
  type: string;
  value: string | undefined;
}

const INT32_MIN = -2_147_483_648;
const INT32_MAX = 2_147_483_647;

/**
 * The type the service gives a value without an `@odata.type` annotation: strings
 * Edm.String, booleans Edm.Boolean, numbers written without a fraction or exponent in the
 * 32-bit range Edm.Int32, other numbers Edm.Double (`5.0` is a Double). A plain JS number
 * (from an object the caller parsed, the text lost) in the 32-bit range counts as Int32.
 */
function inferEdmType(raw: unknown): string {
  if (typeof raw === "string") return "Edm.String";
  if (typeof raw === "boolean") return "Edm.Boolean";
  if (typeof raw === "number") return isInt32(raw) ? "Edm.Int32" : "Edm.Double";
  if (raw instanceof JsonNumberLiteral) {
    if (raw.source === undefined) return isInt32(raw.value) ? "unknown" : "Edm.Double";
    return /^-?\d+$/.test(raw.source) && isInt32(raw.value) ? "Edm.Int32" : "Edm.Double";
  }
  return "unknown";
}

/** The value of `raw` read as `type`, in one canonical text; undefined when it cannot be (an unknown type too). */
function canonicalEdmValue(type: string, raw: unknown): string | undefined {
  return CANONICAL_BY_TYPE.get(type)?.(raw);
}

const CANONICAL_BY_TYPE = new Map<string, (raw: unknown) => string | undefined>([
  ["Edm.String", (raw) => (typeof raw === "string" ? raw : undefined)],
  ["Edm.Boolean", canonicalBoolean],
  ["Edm.Int32", canonicalInt32],
  ["Edm.Int64", canonicalInt64],
  ["Edm.Double", canonicalDouble],
  ["Edm.DateTime", canonicalDateTime],
  ["Edm.Guid", canonicalGuid],
  ["Edm.Binary", canonicalBinary],
]);

function isInt32(value: number): boolean {
  return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX;
}

function numberOf(raw: unknown): number | undefined {
  if (typeof raw === "number") return raw;
  return raw instanceof JsonNumberLiteral ? raw.value : undefined;
}

/** An annotated boolean given as text (`"true"`) is answered as the JSON `true` (Azurite). */
function canonicalBoolean(raw: unknown): string | undefined {
  if (typeof raw === "boolean") return String(raw);
  const text = typeof raw === "string" ? raw.toLowerCase() : undefined;
  return text === "true" || text === "false" ? text : undefined;
}

/** Case and braces aside: `{0B3C...}` and `0b3c...` are one GUID (Azurite answers the text as sent). */
function canonicalGuid(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const match = /^(\{?)([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\}?)$/i.exec(raw);
  if (match === null) return undefined;
  const [, open = "", guid = "", close = ""] = match;
  return open.length === close.length ? guid.toLowerCase() : undefined;
}

function canonicalInt32(raw: unknown): string | undefined {
  const n = typeof raw === "string" && /^[+-]?\d+$/.test(raw) ? Number(raw) : numberOf(raw);
  return n !== undefined && isInt32(n) ? String(n) : undefined;
}

/** Int64 travels as text (`"9007199254740993"`); compared as a BigInt, beyond a double's 53 bits. */
function canonicalInt64(raw: unknown): string | undefined {
  let text: string | undefined;
  if (typeof raw === "string") text = raw.trim();
  else if (raw instanceof JsonNumberLiteral) text = raw.source ?? (Number.isSafeInteger(raw.value) ? String(raw.value) : undefined);
  else if (typeof raw === "number" && Number.isSafeInteger(raw)) text = String(raw);
  if (text === undefined || !/^[+-]?\d+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value >= -(2n ** 63n) && value < 2n ** 63n ? value.toString() : undefined;
}

/** The texts Tables and OData use for a Double's special values. */
const SPECIAL_DOUBLES: ReadonlyMap<string, string> = new Map([
  ["NaN", "NaN"],
  ["Infinity", "Infinity"],
  ["INF", "Infinity"],
  ["-Infinity", "-Infinity"],
  ["-INF", "-Infinity"],
]);

/** A decimal number as JSON or the SDK writes one: no hex, no blanks, no trailing garbage. */
const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** By value: `5`, `5.0` and `"5"` are one Double; `-0` is 0 (Azurite returns `0.0` for it). */
function canonicalDouble(raw: unknown): string | undefined {
  const n = numberOf(raw);
  if (n !== undefined) return String(n === 0 ? 0 : n);
  if (typeof raw !== "string") return undefined;
  const special = SPECIAL_DOUBLES.get(raw.trim());
  if (special !== undefined) return special;
  if (!DECIMAL.test(raw.trim())) return undefined;
  const parsed = Number(raw);
  return Number.isFinite(parsed) ? String(parsed === 0 ? 0 : parsed) : undefined;
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(Z|[+-]\d{2}:\d{2})?$/i;
const TICKS_PER_MS = 10_000n;

/**
 * An instant as the service reads it, in 100-ns ticks since 1970 (UTC), as decimal text. A
 * value without a zone is UTC (the service's reading; Azurite stores it with a `Z` added);
 * an offset is converted; up to 7 fractional digits count, so `...05.678Z`,
 * `...05.6780000Z`, `...05.678` and `...07.6780000+02:00` are equal. A date that does not
 * exist, an offset past 23:59, or more than 7 fractional digits that are not zeros (the
 * service keeps 7) cannot be read. The fraction is added as an integer: `Date` keeps only ms.
 */
function canonicalDateTime(raw: unknown): string | undefined {
  if (typeof raw !== "string") return undefined;
  const match = DATE_TIME.exec(raw.trim());
  if (match === null) return undefined;
  const [, year, month, day, hour, minute, second = "0", fraction = "", zone = "Z"] = match;
  if (fraction.length > 7 && !/^0+$/.test(fraction.slice(7))) return undefined;
  const at = new Date(0);
  at.setUTCFullYear(Number(year), Number(month) - 1, Number(day));
  at.setUTCHours(Number(hour), Number(minute), Number(second), 0);
  // setUTC* roll 31 February into March: compare back to refuse dates that do not exist.
  if (at.getUTCMonth() !== Number(month) - 1 || at.getUTCDate() !== Number(day) || at.getUTCHours() !== Number(hour)) return undefined;
  if (at.getUTCMinutes() !== Number(minute) || at.getUTCSeconds() !== Number(second)) return undefined;
  const offsetInMinutes = zoneOffsetInMinutes(zone);
  if (offsetInMinutes === undefined || Number.isNaN(at.getTime())) return undefined;
  const utcMs = at.getTime() - offsetInMinutes * 60_000;
  return (BigInt(utcMs) * TICKS_PER_MS + BigInt(fraction.slice(0, 7).padEnd(7, "0"))).toString();
}

/** `Z` is 0, `+02:00` is 120, `-05:30` is -330; undefined past 23:59. */
function zoneOffsetInMinutes(zone: string): number | undefined {
  if (zone.toUpperCase() === "Z") return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Base64 as bytes, padding optional (`AQ` and `AQ==` are one byte); strictly otherwise:
 * `Buffer.from(x, "base64")` would skip any character it does not know.
 */
function canonicalBinary(raw: unknown): string | undefined {
  if (typeof raw !== "string" || !/^[A-Za-z0-9+/]*={0,2}$/.test(raw)) return undefined;
  const wholeLength = raw.includes("=") ? raw.length % 4 === 0 : raw.length % 4 !== 1;
  if (!wholeLength) return undefined;
  return Buffer.from(raw, "base64").toString("base64");
}
