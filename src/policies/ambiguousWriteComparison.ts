/**
 * Comparing what a write sent with what a read-back found, property by property and
 * type by type (pure). Both sides are Tables JSON: a value, and for types JSON cannot
 * tell apart an `Name@odata.type` annotation (Edm.Int64, Edm.DateTime, Edm.Guid,
 * Edm.Binary, Edm.Double given as text). Unannotated values are typed as the service
 * infers them: strings Edm.String, booleans Edm.Boolean, whole numbers in the 32-bit range
 * Edm.Int32, other numbers Edm.Double. Any doubt reads as "different": the caller then gets
 * the original error, marked possibly applied, never a false success.
 */

/** One property's type and canonical value. */
export interface TypedValue {
  type: string;
  value: string;
}

/** Service-managed and metadata properties, never compared. */
const IGNORED = new Set(["Timestamp", "odata.etag", "odata.metadata", "odata.type", "odata.id", "odata.editLink"]);
const ANNOTATION = "@odata.type";

/** The user properties of a Tables JSON entity (PartitionKey and RowKey included), typed. Nulls count as absent. */
export function typedProperties(entity: Record<string, unknown>): Map<string, TypedValue> {
  const result = new Map<string, TypedValue>();
  for (const [name, raw] of Object.entries(entity)) {
    if (IGNORED.has(name) || name.startsWith("odata.") || name.endsWith(ANNOTATION) || name.includes("@odata.")) continue;
    if (raw === null || raw === undefined) continue;
    const annotation = entity[name + ANNOTATION];
    const type = typeof annotation === "string" ? annotation : inferType(raw);
    result.set(name, { type, value: canonicalValue(type, raw) });
  }
  return result;
}

/**
 * True when the stored entity holds what was sent: with `mode: "exact"` (insert, replace)
 * the same properties and no others; with `mode: "subset"` (merge) every sent property,
 * others allowed.
 */
export function entityMatches(sent: Record<string, unknown>, stored: Record<string, unknown>, mode: "exact" | "subset"): boolean {
  const want = typedProperties(sent);
  const have = typedProperties(stored);
  if (mode === "exact" && want.size !== have.size) return false;
  for (const [name, value] of want) {
    const found = have.get(name);
    if (found === undefined || found.type !== value.type || found.value !== value.value) return false;
  }
  return true;
}

function inferType(value: unknown): string {
  switch (typeof value) {
    case "string":
      return "Edm.String";
    case "boolean":
      return "Edm.Boolean";
    case "number":
      return Number.isInteger(value) && value >= -2_147_483_648 && value <= 2_147_483_647 ? "Edm.Int32" : "Edm.Double";
    default:
      return "unknown";
  }
}

function canonicalValue(type: string, raw: unknown): string {
  switch (type) {
    case "Edm.Double":
      return canonicalDouble(raw);
    case "Edm.Int64":
      return canonicalInt64(raw);
    case "Edm.DateTime":
      return canonicalDateTime(raw);
    case "Edm.Guid":
      return typeof raw === "string" ? raw.toLowerCase() : JSON.stringify(raw);
    case "Edm.Binary":
      return typeof raw === "string" ? Buffer.from(raw, "base64").toString("base64") : JSON.stringify(raw);
    case "Edm.String":
      return typeof raw === "string" ? raw : JSON.stringify(raw);
    default:
      return typeof raw === "string" ? raw : JSON.stringify(raw);
  }
}

function canonicalDouble(raw: unknown): string {
  if (typeof raw === "string" && raw.trim() === "") return "invalid";
  const n = typeof raw === "number" ? raw : typeof raw === "string" ? Number(raw) : Number.NaN;
  return Number.isNaN(n) ? (raw === "NaN" ? "NaN" : "invalid") : String(n);
}

function canonicalInt64(raw: unknown): string {
  const text = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
  if (!/^-?\d+$/.test(text)) return `invalid:${String(raw)}`;
  return BigInt(text).toString();
}

/** ISO 8601 UTC to 100-ns ticks precision: `...T00:00:00.000Z` and `...T00:00:00.0000000Z` are equal. */
function canonicalDateTime(raw: unknown): string {
  if (typeof raw !== "string") return `invalid:${String(raw)}`;
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,7}))?(Z|[+-]00:00)$/.exec(raw.trim());
  if (match) return `${match[1]}.${(match[2] ?? "").padEnd(7, "0")}Z`;
  const at = Date.parse(raw);
  if (Number.isNaN(at)) return `invalid:${raw}`;
  const iso = new Date(at).toISOString();
  return `${iso.slice(0, -5)}.${iso.slice(-4, -1).padEnd(7, "0")}Z`;
}
