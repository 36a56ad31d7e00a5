// The `operation` label: the fixed set of names and the one function that reads them from a request.
import { parseAccountAndPath, type AccountAndPath } from "./parseAccountAndPath.js";
import type { StorageService } from "./partitionScope.js";
import { queryParameter, searchOf } from "./urlText.js";

/** Every {@link StorageOperation}, in a stable order. */
export const STORAGE_OPERATIONS = [
  // Tables
  "query_entities",
  "get_entity",
  "insert_entity",
  "update_entity",
  "upsert_entity",
  "delete_entity",
  "create_table",
  "delete_table",
  "query_tables",
  // Tables `$batch` and Blob `comp=batch`
  "batch",
  // Blob
  "upload_blob",
  "download_blob",
  "get_blob_properties",
  "delete_blob",
  "copy_blob",
  "put_block",
  "put_block_list",
  "append_block",
  "list_blobs",
  "create_container",
  "delete_container",
  "get_container_properties",
  "list_containers",
  // Queue
  "send_message",
  "receive_messages",
  "peek_messages",
  "delete_message",
  "update_message",
  "clear_messages",
  "create_queue",
  "delete_queue",
  "get_queue_properties",
  "list_queues",
  // Anything else: ACLs, metadata, leases, service properties, unparsable URLs.
  "other",
] as const;

/**
 * The `operation` label: a small fixed set of names for what a request does, read from its
 * service, method, URL and (for Tables updates and Blob copies) one header; the names are
 * {@link STORAGE_OPERATIONS}. Not exported from the package, but the metrics' `operation`
 * label values are a contract (docs/metrics.md).
 */
export type StorageOperation = (typeof STORAGE_OPERATIONS)[number];

/** The parts of a request that operation naming reads; a `PipelineRequest` fits. */
export interface OperationRequest {
  method: string;
  /** The absolute request URL. */
  url: string;
  /** Request headers; only `If-Match` and `x-ms-copy-source` are read. */
  headers?: { get(name: string): string | undefined };
}

/**
 * Names the operation a request performs (see {@link StorageOperation}). Pure and total:
 * a URL it cannot read gives `"other"`. Tables updates: a PUT or PATCH/MERGE on an entity
 * address with an `If-Match` header (any value, `*` included) is `update_entity`, without one
 * `upsert_entity`; that is the REST API's own distinction (Update vs Insert-Or-Replace/Merge),
 * and the SDK's `updateEntity` sends `If-Match: *` unless given an etag.
 */
export function storageOperationName(service: StorageService, request: OperationRequest): StorageOperation {
  const parsed = parseAccountAndPath(request.url);
  return parsed === undefined ? "other" : operationOfParsedUrl(service, request, parsed);
}

/** {@link storageOperationName} of a request whose URL `parsed` already holds (the request address parses it once). */
export function operationOfParsedUrl(service: StorageService, request: OperationRequest, parsed: AccountAndPath): StorageOperation {
  const parts: OperationParts = {
    method: request.method.toUpperCase(),
    segments: parsed.pathSegments,
    search: searchOf(request.url),
    headers: request.headers,
  };
  switch (service) {
    case "table":
      return tableOperation(parts);
    case "blob":
      return blobOperation(parts);
    case "queue":
      return queueOperation(parts);
    default:
      return "other";
  }
}

/** A request taken apart for naming. */
interface OperationParts {
  /** The HTTP method, upper-case. */
  method: string;
  /** Percent-decoded path segments after the account. */
  segments: string[];
  /** The raw query string without its `?`. */
  search: string;
  headers: OperationRequest["headers"];
}

/**
 * A Tables operation reads only the method, the first account-relative path segment, the
 * query and the headers; later segments never matter. The segment's parentheses are
 * checked by shape, not parsed: none (`orders`), empty (`orders()`, a query) or holding a
 * key (`orders(PartitionKey='p',RowKey='r')`, an entity address).
 */
function tableOperation({ method, segments, search, headers }: OperationParts): StorageOperation {
  const first = segments[0];
  if (first === undefined || first === "") return "other";
  if (first === "$batch") return method === "POST" ? "batch" : "other";
  const open = first.indexOf("(");
  if (open !== -1 && !first.endsWith(")")) return "other"; // malformed parentheses
  if (first.startsWith("Tables") && (first.length === 6 || open === 6)) {
    if (method === "GET") return "query_tables";
    if (method === "POST") return "create_table";
    return method === "DELETE" ? "delete_table" : "other";
  }
  if (search !== "" && queryParameter(search, "comp") !== undefined) return "other"; // table ACLs
  const parentheses = open === -1 ? "none" : first.length - open > 2 ? "key" : "empty";
  if (parentheses === "key") {
    if (method === "PUT" || method === "PATCH" || method === "MERGE") return headers?.get("if-match") === undefined ? "upsert_entity" : "update_entity";
    return method === "GET" ? "get_entity" : method === "DELETE" ? "delete_entity" : "other";
  }
  if (method === "GET") return "query_entities";
  return method === "POST" && parentheses === "none" ? "insert_entity" : "other";
}

function blobOperation({ method, segments, search, headers }: OperationParts): StorageOperation {
  const comp = search === "" ? undefined : queryParameter(search, "comp");
  if (comp === "batch") return method === "POST" ? "batch" : "other";
  if (segments.length === 0 || segments[0] === "") {
    return method === "GET" && comp === "list" ? "list_containers" : "other";
  }
  if (segments.length === 1 && queryParameter(search, "restype") === "container") {
    if (comp === "list") return method === "GET" ? "list_blobs" : "other";
    if (comp !== undefined) return "other"; // ACL, metadata, lease
    if (method === "PUT") return "create_container";
    if (method === "DELETE") return "delete_container";
    return method === "GET" || method === "HEAD" ? "get_container_properties" : "other";
  }
  // Any other comp (metadata, properties, tier, lease, snapshot, page...) is "other".
  if (comp !== undefined) return method === "PUT" ? (BLOCK_OPERATIONS.get(comp) ?? "other") : "other";
  if (method === "PUT") return headers?.get("x-ms-copy-source") === undefined ? "upload_blob" : "copy_blob";
  return BLOB_OPERATIONS.get(method) ?? "other";
}

/** The PUTs that write a blob's blocks, by their `comp`. */
const BLOCK_OPERATIONS = new Map<string, StorageOperation>([["block", "put_block"], ["blocklist", "put_block_list"], ["appendblock", "append_block"]]);
const BLOB_OPERATIONS = new Map<string, StorageOperation>([["GET", "download_blob"], ["HEAD", "get_blob_properties"], ["DELETE", "delete_blob"]]);

function queueOperation({ method, segments, search }: OperationParts): StorageOperation {
  const comp = search === "" ? undefined : queryParameter(search, "comp");
  if (segments.length === 0 || segments[0] === "") {
    return method === "GET" && comp === "list" ? "list_queues" : "other";
  }
  if (segments.length === 1) {
    if (comp === "metadata") return method === "GET" || method === "HEAD" ? "get_queue_properties" : "other";
    if (comp !== undefined) return "other"; // ACL
    if (method === "PUT") return "create_queue";
    return method === "DELETE" ? "delete_queue" : "other";
  }
  if (segments[1] !== "messages") return "other";
  if (segments.length === 2) {
    if (method === "GET") return queryParameter(search, "peekonly")?.toLowerCase() === "true" ? "peek_messages" : "receive_messages";
    return method === "POST" ? "send_message" : method === "DELETE" ? "clear_messages" : "other";
  }
  if (segments.length === 3) {
    if (method === "DELETE") return "delete_message";
    return method === "PUT" ? "update_message" : "other";
  }
  return "other";
}
