/** A value of one log field; undefined fields are left out. */
export type LogFieldValue = string | number | undefined;

/** Longest value written; longer ones (a long blob name) are cut and end in `...`. */
export const MAX_LOG_VALUE_CHARS = 200;

const BARE_VALUE = /^[A-Za-z0-9_.:/@+-]+$/;

/**
 * Formats fields as `key=value` pairs, in order: `operation=upload_blob attempt=1`.
 * Values with spaces, quotes, `=`, `|` or control characters are JSON-quoted, so a blob name
 * or PartitionKey cannot forge another field or a second log line. Pure.
 */
export function formatLogFields(fields: Readonly<Record<string, LogFieldValue>>): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    parts.push(`${key}=${formatValue(value)}`);
  }
  return parts.join(" ");
}

function formatValue(value: string | number): string {
  if (typeof value === "number") return Number.isFinite(value) ? String(Math.round(value)) : String(value);
  const cut = value.length > MAX_LOG_VALUE_CHARS ? `${value.slice(0, MAX_LOG_VALUE_CHARS)}...` : value;
  return BARE_VALUE.test(cut) ? cut : JSON.stringify(cut);
}
