import { partitionKeyFromFilter } from "./partitionKeyFromFilter.js";
import type { PartitionScope } from "./partitionScope.js";
import { parseTableSegment } from "./parseTableSegment.js";
import { queryParameter } from "./urlText.js";

/** A Tables request already split into account, path and query. */
export interface TableRequestParts {
  /** The HTTP method. */
  method: string;
  /** The storage account. */
  account: string;
  /** Percent-decoded path segments after the account. */
  pathSegments: string[];
  /** The raw query string, with or without its leading `?`. */
  search: string;
  /** The request body as text, if any. */
  body?: string | undefined;
}

/**
 * The scope of a Tables request: an entity address or an insert body pins the
 * PartitionKey; a query pins one when
 * its `$filter` is an equality on PartitionKey; anything else (other queries, `Tables`
 * operations, table ACLs) is table-wide, and service operations are account-wide.
 */
export function tableScope(parts: TableRequestParts): PartitionScope {
  const { account } = parts;
  const accountWide: PartitionScope = { service: "table", account, resource: "" };
  const first = parts.pathSegments[0];
  if (first === undefined || first === "") return accountWide;
  const segment = parseTableSegment(first);
  if (segment === undefined) return accountWide;

  // `$batch` is scoped by tableBatchScope, which calls this function for its sub-requests.
  if (segment.name === "$batch") return accountWide;
  if (segment.name === "Tables") {
    return { service: "table", account, resource: segment.positional ?? tableNameFromBody(parts) ?? "" };
  }

  const table: PartitionScope = { service: "table", account, resource: segment.name };
  const keyed = segment.keys.get("PartitionKey");
  if (keyed !== undefined) return { ...table, partition: keyed };
  if (segment.hasParentheses || parts.method.toUpperCase() === "GET") {
    const filter = queryParameter(parts.search, "$filter");
    const pinned = filter === undefined ? undefined : partitionKeyFromFilter(filter);
    return pinned === undefined ? table : { ...table, partition: pinned };
  }
  if (parts.method.toUpperCase() === "POST" && !parts.search.includes("comp=")) {
    const inserted = stringPropertyFromJson(parts.body, "PartitionKey");
    return inserted === undefined ? table : { ...table, partition: inserted };
  }
  return table;
}

/** `POST /Tables` names the table it creates in its body. */
function tableNameFromBody(parts: TableRequestParts): string | undefined {
  return parts.method.toUpperCase() === "POST" ? stringPropertyFromJson(parts.body, "TableName") : undefined;
}

/**
 * A top-level string property of a JSON object body. Falls back to a pattern when the
 * body does not parse (truncated, or not quite JSON), because the key is usually first.
 */
export function stringPropertyFromJson(body: string | undefined, property: string): string | undefined {
  if (body === undefined || body === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
    const value = (parsed as Record<string, unknown>)[property];
    return typeof value === "string" ? value : undefined;
  } catch {
    const match = new RegExp(`"${property}"\\s*:\\s*("(?:[^"\\\\]|\\\\.)*")`).exec(body);
    if (match?.[1] === undefined) return undefined;
    try {
      return JSON.parse(match[1]) as string;
    } catch {
      return undefined;
    }
  }
}
