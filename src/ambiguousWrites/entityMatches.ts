import { canonicalEdmValue, inferEdmType, type TypedValue } from "./edmValue.js";
import { parseEntityJson } from "./parseEntityJson.js";

/**
 * Comparing what a write sent with what a read-back found, property by property and type
 * by type (pure). Both sides are Tables JSON: a value, and for types JSON cannot tell
 * apart an `Name@odata.type` annotation (Edm.Int64, Edm.DateTime, Edm.Guid, Edm.Binary,
 * Edm.Double given as text). Unannotated values are typed as the service infers them (see
 * {@link inferEdmType}). Any doubt reads as "different": the caller then gets the original
 * error, marked possibly applied, never a false success.
 */

/** Service-managed and metadata properties, never compared. */
const IGNORED = new Set(["Timestamp"]);
const ANNOTATION = "@odata.type";
/** Longest JSON text compared: an entity is at most 1 MiB (4 MiB of JSON is plenty). */
const MAX_ENTITY_JSON_LENGTH = 4 * 1024 * 1024;

/** The user properties of a Tables JSON entity (PartitionKey and RowKey included), typed. Nulls count as absent. */
export function typedProperties(entity: Record<string, unknown>): Map<string, TypedValue> {
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
 * True when the stored entity holds what was sent: with `mode: "exact"` (insert, replace)
 * the same properties and no others; with `mode: "subset"` (merge) every sent property,
 * others allowed. Pass each side as the JSON text that went over the wire where you have
 * it: a whole-number Double arrives as `5.0`, which only the text tells apart from the
 * Int32 `5` (an object from `JSON.parse` has lost it and reads as Int32). Text that does
 * not parse as a JSON object matches nothing.
 */
export function entityMatches(sent: Record<string, unknown> | string, stored: Record<string, unknown> | string, mode: "exact" | "subset"): boolean {
  const sentEntity = typeof sent === "string" ? parseEntityJson(sent, MAX_ENTITY_JSON_LENGTH) : sent;
  const storedEntity = typeof stored === "string" ? parseEntityJson(stored, MAX_ENTITY_JSON_LENGTH) : stored;
  if (sentEntity === undefined || storedEntity === undefined) return false;
  const want = typedProperties(sentEntity);
  const have = typedProperties(storedEntity);
  if (mode === "exact" && want.size !== have.size) return false;
  for (const [name, value] of want) {
    const found = have.get(name);
    if (value.value === undefined || found === undefined || found.type !== value.type || found.value !== value.value) return false;
  }
  return true;
}
