import { parseAccountAndPath, type AccountAndPath } from "./parseAccountAndPath.js";
import type { PartitionScope, ScopeRequest, StorageService } from "./partitionScope.js";
import { tableBatchScope, tableScope } from "./tableScope.js";
import { searchOf } from "./urlText.js";

/**
 * The partition a storage request touches (see {@link PartitionScope}). `service`
 * overrides detection from the hostname; it is needed for Azurite path-style URLs,
 * except for requests only Tables makes (`$batch`, `Tables`, entity addresses), which
 * are recognised by shape. Pure and total: it never throws, and input it cannot read
 * gives undefined or an account/resource-wide scope.
 */
export function extractScope(request: ScopeRequest, service?: StorageService): PartitionScope | undefined {
  try {
    if (typeof request !== "object" || request === null || typeof request.url !== "string") return undefined;
    const parsed = parseAccountAndPath(request.url);
    if (parsed === undefined) return undefined;
    return scopeOfParsedUrl(request, parsed, service ?? serviceOfParsedUrl(parsed));
  } catch {
    // Scope extraction sits in every request's path: a bug here must cost a scope, not a request.
    return undefined;
  }
}

/** The service a parsed URL addresses: the one its host names, else Tables for a path only Tables uses. */
export function serviceOfParsedUrl(parsed: AccountAndPath): StorageService | undefined {
  return parsed.hostService ?? tableByShape(parsed.pathSegments);
}

/**
 * {@link extractScope} of a request whose URL `parsed` already holds and whose service is
 * resolved (the request address parses once); its body is read only when it is text (Tables
 * inserts and `$batch`). May throw on hostile input: callers guard.
 */
export function scopeOfParsedUrl(request: Omit<ScopeRequest, "body"> & { body?: unknown }, parsed: AccountAndPath, service: StorageService | undefined): PartitionScope | undefined {
  const method = typeof request.method === "string" ? request.method : "";
  const body = typeof request.body === "string" ? request.body : undefined;
  switch (service) {
    case "table":
      if (parsed.pathSegments[0] === "$batch") {
        return tableBatchScope(parsed.account, body ?? "") ?? { service: "table", account: parsed.account, resource: "" };
      }
      return tableScope({ method, account: parsed.account, pathSegments: parsed.pathSegments, search: searchOf(request.url), body });
    case "blob":
      return blobScope(parsed.account, parsed.pathSegments);
    case "queue":
      return queueScope(parsed.account, parsed.pathSegments);
    default:
      return undefined;
  }
}

/** Path shapes only the Tables service uses; container and queue names cannot contain `$`, `(` or capitals. */
function tableByShape(pathSegments: string[]): StorageService | undefined {
  const first = pathSegments[0] ?? "";
  return first === "$batch" || first.startsWith("Tables") || first.includes("(") ? "table" : undefined;
}

/**
 * The scope of a Blob request: `/{container}/{blob name}` is the blob's own partition
 * (the name may hold slashes); `/{container}` is container-wide; the root is account-wide.
 */
function blobScope(account: string, pathSegments: string[]): PartitionScope {
  const [container = "", ...blobPath] = pathSegments;
  const scope: PartitionScope = { service: "blob", account, resource: container };
  if (container === "") return scope;
  const blobName = blobPath.join("/");
  return blobName === "" ? scope : { ...scope, partition: blobName };
}

/** The scope of a Queue request: a queue is one partition, so there is never a `partition`. */
function queueScope(account: string, pathSegments: string[]): PartitionScope {
  return { service: "queue", account, resource: pathSegments[0] ?? "" };
}
