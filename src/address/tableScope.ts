import { parseAccountAndPath } from "./parseAccountAndPath.js";
import { parseTableSegment, partitionKeyFromFilter } from "./odata.js";
import type { PartitionScope } from "./partitionScope.js";
import { queryParameter, safeDecodeURIComponent, searchOf } from "./urlText.js";

/** A Tables request already split into account, path and query. */
export interface TableRequestParts {
  method: string;
  account: string;
  /** Percent-decoded path segments after the account. */
  pathSegments: string[];
  /** The raw query string, with or without its leading `?`. */
  search: string;
  /** The request body as text, if any. */
  body?: string | undefined;
}

/**
 * The scope of a Tables request: an entity address or an insert body pins the PartitionKey; a
 * query pins one when its `$filter` is an equality on PartitionKey; anything else (other queries,
 * `Tables` operations, table ACLs) is table-wide, and service operations are account-wide.
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
function stringPropertyFromJson(body: string | undefined, property: string): string | undefined {
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

/** One HTTP request inside a `$batch` body. */
interface SubRequest {
  method: string;
  url: string;
  body: string;
}

const REQUEST_LINE = /^([A-Z]+) (\S+) HTTP\/1\.[01]$/;

/**
 * The scope of a Tables `$batch` (entity group transaction): the sub-requests of its
 * changeset, which Azure requires to share one table and one PartitionKey. Sub-request
 * URLs name the table; entity addresses or insert bodies name the key. Returns the
 * table-wide scope when the keys are missing or disagree, and undefined when no
 * sub-request (or no single table) can be read.
 */
export function tableBatchScope(account: string, body: string): PartitionScope | undefined {
  const scopes = parseSubRequests(body).map((request) => subRequestScope(account, request));
  const first = scopes[0];
  if (first === undefined) return undefined;
  if (scopes.some((scope) => scope.resource !== first.resource)) return undefined;
  const table: PartitionScope = { service: "table", account, resource: first.resource };
  const partition = first.partition;
  if (partition === undefined || scopes.some((scope) => scope.partition !== partition)) return table;
  return { ...table, partition };
}

function subRequestScope(account: string, request: SubRequest): PartitionScope {
  const absolute = parseAccountAndPath(request.url);
  const pathSegments = absolute?.pathSegments ?? [lastPathSegment(request.url)];
  return tableScope({ method: request.method, account, pathSegments, search: searchOf(request.url), body: request.body });
}

/** A relative sub-request URL (`/orders(PartitionKey='p',RowKey='r')`): its last path segment is the table or entity address. */
function lastPathSegment(url: string): string {
  const end = url.search(/[?#]/);
  const path = end === -1 ? url : url.slice(0, end);
  return safeDecodeURIComponent(path.split("/").filter((segment) => segment !== "").pop() ?? "");
}

/**
 * Finds request lines (`PATCH http://host/acct/t(PartitionKey='p',RowKey='r') HTTP/1.1`)
 * in the multipart text, skips their headers, and takes the text up to the next
 * boundary line as the body. Boundaries are not matched by name: a request line is
 * distinctive enough, and this also reads batches with no changeset (a batched query).
 */
function parseSubRequests(body: string): SubRequest[] {
  const lines = body.split(/\r?\n/);
  const requests: SubRequest[] = [];
  let index = 0;
  while (index < lines.length) {
    const match = REQUEST_LINE.exec(lines[index] ?? "");
    index++;
    if (match === null) continue;
    while (index < lines.length && lines[index] !== "") index++; // headers
    const bodyLines: string[] = [];
    for (index++; index < lines.length && !(lines[index] ?? "").startsWith("--"); index++) {
      bodyLines.push(lines[index] ?? "");
    }
    requests.push({ method: match[1] ?? "", url: match[2] ?? "", body: bodyLines.join("\n").trim() });
  }
  return requests;
}
