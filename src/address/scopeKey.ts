import type { PartitionScope } from "./partitionScope.js";

const SEPARATOR = "|";

/**
 * A stable string key for a scope, e.g. `"table|acct|orders|pk-1"`, for use in maps.
 * Unambiguous: `\` and `|` inside fields are backslash-escaped, and a scope without a
 * partition has three fields while an empty PartitionKey (`""`, valid in Tables) has four.
 */
export function scopeKey(scope: PartitionScope): string {
  const fields = [scope.service, scope.account, scope.resource];
  if (scope.partition !== undefined) fields.push(scope.partition);
  return fields.map(escapeField).join(SEPARATOR);
}

function escapeField(field: string): string {
  // Most fields hold neither character: skip the regex and its closure (every request's hot path).
  if (!field.includes("|") && !field.includes("\\")) return field;
  return field.replace(/[\\|]/g, (c) => `\\${c}`);
}
