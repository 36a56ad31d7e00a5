import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { AccountAndPath } from "./parseAccountAndPath.js";
import { parseTableSegment } from "./odata.js";
import { isWriteMethod } from "./requestMethod.js";
import { searchOf } from "./urlText.js";

/** What a Tables write does, as far as settling an ambiguous outcome goes. */
export type TableWriteKind = "insert" | "replace" | "merge" | "delete" | "upsert" | "batch";

/** A Tables write request, taken apart (pure: no I/O). */
export interface TableWrite {
  kind: TableWriteKind;
  /** The `operation` label of the metric (`insert_entity`, `update_entity`, `delete_entity`, `upsert_entity`, `batch`). */
  operation: "insert_entity" | "update_entity" | "delete_entity" | "upsert_entity" | "batch";
  /** The entity's keys, when the request names one entity. */
  partitionKey?: string;
  rowKey?: string;
  /** The `If-Match` value; undefined for inserts and upserts. */
  ifMatch?: string;
}

/**
 * Describes a Tables entity write whose URL `parsed` holds, or returns undefined for anything
 * else (reads, table operations, ACLs, other services' URLs that do not parse as Tables
 * addresses). `body` is needed for inserts, whose keys are in the body. Read through the
 * request's address (`RequestAddress.tableWrite`), which parses the URL once.
 */
export function tableWriteOfParsedUrl(request: Pick<PipelineRequest, "method" | "url" | "headers">, parsed: AccountAndPath, body: string | undefined): TableWrite | undefined {
  const method = request.method.toUpperCase();
  if (!isWriteMethod(method) || parsed.pathSegments.length !== 1) return undefined;
  const segment = parseTableSegment(parsed.pathSegments[0] as string);
  if (segment === undefined || segment.name === "" || segment.name === "Tables") return undefined;
  if (segment.name === "$batch") return method === "POST" ? { kind: "batch", operation: "batch" } : undefined;
  const partitionKey = segment.keys.get("PartitionKey");
  const rowKey = segment.keys.get("RowKey");
  const ifMatch = request.headers.get("if-match") ?? undefined;
  if (!segment.hasParentheses) {
    if (method !== "POST" || searchOf(request.url).includes("comp=")) return undefined;
    const keys = entityKeysFromBody(body);
    return keys === undefined ? undefined : { kind: "insert", operation: "insert_entity", ...keys };
  }
  if (partitionKey === undefined || rowKey === undefined) return undefined;
  const keys = { partitionKey, rowKey };
  const tunnelled = (request.headers.get("x-http-method") ?? "").toUpperCase();
  const verb = method === "POST" && tunnelled !== "" ? tunnelled : method;
  if (verb === "DELETE") return { kind: "delete", operation: "delete_entity", ...keys, ifMatch };
  if (verb !== "PUT" && verb !== "PATCH" && verb !== "MERGE") return undefined;
  if (ifMatch === undefined) return { kind: "upsert", operation: "upsert_entity", ...keys };
  return { kind: verb === "PUT" ? "replace" : "merge", operation: "update_entity", ...keys, ifMatch };
}

/**
 * The entity's URL: the write's own for updates and deletes; for an insert, the table's URL
 * with the entity address appended (keys quoted and encoded the way @azure/data-tables
 * does). The query (a SAS in the client's URL, if any) is kept as it was before signing.
 */
export function entityUrl(writeUrl: string, write: TableWrite): string {
  if (write.kind !== "insert") return writeUrl;
  const url = new URL(writeUrl);
  const key = (value: string): string => encodeURIComponent(value.replace(/'/g, "''"));
  url.pathname = `${url.pathname.replace(/\/$/, "")}(PartitionKey='${key(write.partitionKey ?? "")}',RowKey='${key(write.rowKey ?? "")}')`;
  return url.toString();
}

function entityKeysFromBody(body: string | undefined): { partitionKey: string; rowKey: string } | undefined {
  const entity = parseJsonObject(body);
  if (entity === undefined) return undefined;
  const { PartitionKey: partitionKey, RowKey: rowKey } = entity;
  return typeof partitionKey === "string" && typeof rowKey === "string" ? { partitionKey, rowKey } : undefined;
}

/** Longest JSON text read: an entity is at most 1 MiB (4 MiB of JSON is plenty). */
const MAX_ENTITY_JSON_LENGTH = 4 * 1024 * 1024;

/** A Tables JSON entity (parsed with `reviver`), or undefined for anything else (empty, truncated, an array, longer than 4 MiB). */
export function parseJsonObject(text: string | undefined, reviver?: (key: string, value: unknown) => unknown): Record<string, unknown> | undefined {
  if (text === undefined || text === "" || text.length > MAX_ENTITY_JSON_LENGTH) return undefined;
  try {
    const parsed: unknown = JSON.parse(text, reviver);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
