import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { errorCodeOf } from "../classification/networkErrors.js";
import { parseAccountAndPath } from "../partition/parseAccountAndPath.js";
import { parseTableSegment } from "../partition/parseTableSegment.js";
import { upperCaseMethod } from "../partition/upperCaseMethod.js";
import type { AttemptResult } from "./attemptResult.js";

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

/** How an ambiguous write ended; the `result` label of `ambiguous_writes_resolved_total`. */
export type AmbiguousWriteResult =
  /** Read back: the store holds what was sent (or, for a delete, no entity); reported as success. */
  | "applied"
  /** Read back: the store holds something else; the error surfaces, marked possibly applied. */
  | "differs"
  /** The read-back failed or was not possible; the error surfaces, marked possibly applied. */
  | "unresolved"
  /** A `$batch`: never read back (see docs/data-safety.md); marked possibly applied. */
  | "not_resolvable";

/** Every {@link AmbiguousWriteResult}. */
export const AMBIGUOUS_WRITE_RESULTS: readonly AmbiguousWriteResult[] = ["applied", "differs", "unresolved", "not_resolvable"];

/**
 * Network errors raised before a connection carried the request: the store cannot have
 * seen it. Every other network error or timeout may have struck after the request was sent.
 */
const NOT_SENT_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * True when an attempt's outcome is unknown: the request may have been applied although
 * no success came back. A reset, a socket error or a timeout after the request could have
 * left (our per-attempt timeout included), and 500/502/504 answers (500 OperationTimedOut:
 * "the operation may or may not have succeeded"). 503 ServerBusy, 429 and 408 say the
 * request was not processed; a connection that never opened cannot have carried it.
 */
export function isUnknownOutcome(result: AttemptResult): boolean {
  const cls = result.outcomeClass;
  if (cls !== "transient" && cls !== "timeout") return false;
  if (result.status !== undefined) return result.status === 500 || result.status === 502 || result.status === 504;
  const code = errorCodeOf(result.error);
  return code === undefined || !NOT_SENT_ERROR_CODES.has(code);
}

/** True for methods that change state (everything but GET, HEAD, OPTIONS). */
export function isWriteMethod(method: string): boolean {
  const m = upperCaseMethod(method);
  return m !== "GET" && m !== "HEAD" && m !== "OPTIONS";
}

/**
 * Describes a Tables entity write, or returns undefined for anything else (reads, table
 * operations, ACLs, other services' URLs that do not parse as Tables addresses).
 * `body` is needed for inserts, whose keys are in the body.
 */
export function describeTableWrite(request: Pick<PipelineRequest, "method" | "url" | "headers">, body: string | undefined): TableWrite | undefined {
  const method = request.method.toUpperCase();
  if (!isWriteMethod(method)) return undefined;
  const parts = parseAccountAndPath(request.url);
  if (parts === undefined || parts.pathSegments.length !== 1) return undefined;
  const segment = parseTableSegment(parts.pathSegments[0] as string);
  if (segment === undefined || segment.name === "" || segment.name === "Tables") return undefined;
  if (segment.name === "$batch") return method === "POST" ? { kind: "batch", operation: "batch" } : undefined;
  const partitionKey = segment.keys.get("PartitionKey");
  const rowKey = segment.keys.get("RowKey");
  const ifMatch = request.headers.get("if-match") ?? undefined;
  if (!segment.hasParentheses) {
    if (method !== "POST" || request.url.includes("comp=")) return undefined;
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
 * True when `result` is the answer a retry gets if an earlier attempt of `write` was
 * applied: 409 for an insert (the entity exists), 404 for a delete (it is gone), 412 for
 * an update conditional on an ETag (the ETag changed). An update with `If-Match: *` or an
 * upsert succeeds again when repeated, so nothing needs settling.
 */
export function isAppliedAnswer(write: TableWrite, result: AttemptResult): boolean {
  const status = result.status;
  const code = result.errorCode;
  switch (write.kind) {
    case "insert":
      return status === 409 && (code === undefined || code === "EntityAlreadyExists");
    case "delete":
      return status === 404 && (code === undefined || code === "ResourceNotFound" || code === "EntityNotFound");
    case "replace":
    case "merge":
      return status === 412 && write.ifMatch !== undefined && write.ifMatch.trim() !== "*";
    default:
      return false;
  }
}

/** The request body as text, when it is text (the SDK sends Tables JSON as a string). */
export function bodyText(request: PipelineRequest): string | undefined {
  const body = request.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  return undefined;
}

function entityKeysFromBody(body: string | undefined): { partitionKey: string; rowKey: string } | undefined {
  const entity = parseJsonObject(body);
  if (entity === undefined) return undefined;
  const { PartitionKey: partitionKey, RowKey: rowKey } = entity;
  return typeof partitionKey === "string" && typeof rowKey === "string" ? { partitionKey, rowKey } : undefined;
}

/** A JSON object body, or undefined for anything else (empty, truncated, an array, too large). */
export function parseJsonObject(text: string | undefined, maxLength = 8 * 1024 * 1024): Record<string, unknown> | undefined {
  if (text === undefined || text === "" || text.length > maxLength) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
