import { blobScope } from "./blobScope.js";
import { detectServiceFromUrl } from "./detectServiceFromUrl.js";
import { parseAccountAndPath } from "./parseAccountAndPath.js";
import type { PartitionScope, ScopeRequest, StorageService } from "./partitionScope.js";
import { queueScope } from "./queueScope.js";
import { tableBatchScope } from "./tableBatchScope.js";
import { tableScope } from "./tableScope.js";

/**
 * The partition a storage request touches (see {@link PartitionScope}). `service`
 * overrides detection from the hostname; it is needed for Azurite path-style URLs,
 * except for requests only Tables makes (`$batch`, `Tables`, entity addresses), which
 * are recognised by shape. Pure and total: it never throws, and input it cannot read
 * gives undefined or an account/resource-wide scope.
 */
export function extractScope(request: ScopeRequest, service?: StorageService): PartitionScope | undefined {
  try {
    return extractScopeUnchecked(request, service);
  } catch {
    // Scope extraction sits in every request's path: a bug here must cost a scope, not a request.
    return undefined;
  }
}

function extractScopeUnchecked(request: ScopeRequest, service: StorageService | undefined): PartitionScope | undefined {
  if (typeof request !== "object" || request === null || typeof request.url !== "string") return undefined;
  const parsed = parseAccountAndPath(request.url);
  if (parsed === undefined) return undefined;
  const method = typeof request.method === "string" ? request.method : "";
  const body = typeof request.body === "string" ? request.body : undefined;
  const resolved = service ?? detectServiceFromUrl(request.url) ?? tableByShape(parsed.pathSegments);
  switch (resolved) {
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

function searchOf(url: string): string {
  const hash = url.indexOf("#");
  const withoutHash = hash === -1 ? url : url.slice(0, hash);
  const question = withoutHash.indexOf("?");
  return question === -1 ? "" : withoutHash.slice(question);
}
