import { parseAccountAndPath } from "./parseAccountAndPath.js";
import type { PartitionScope } from "./partitionScope.js";
import { tableScope } from "./tableScope.js";
import { safeDecodeURIComponent, searchOf } from "./urlText.js";

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
