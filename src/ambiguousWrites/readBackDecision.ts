import { createHttpHeaders, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import type { AmbiguousWriteResult } from "./ambiguousWriteResult.js";
import { entityMatches, parseEntityJson } from "./entityMatches.js";

/** What a read-back decided (pure: from the GET's answer). */
export interface ReadBackOutcome {
  result: AmbiguousWriteResult;
  /** With `applied`: the success response to return in place of the error. */
  response?: PipelineResponse;
  /** Why it is `unresolved`, in our own words (never the server's), for the log. */
  reason?: string;
}

/**
 * Decides an ambiguous insert from the read-back's answer: the entity exactly as sent is
 * `applied` (with the success the SDK would have got), another entity or none `differs`,
 * anything unreadable `unresolved`.
 */
export function decideInsertReadBack(request: PipelineRequest, sentBody: string | undefined, found: PipelineResponse): ReadBackOutcome {
  if (found.status === 404) return { result: "differs" };
  if (found.status !== 200) return { result: "unresolved", reason: readBackRefusal(found.status) };
  const stored = parseEntityJson(found.bodyAsText ?? undefined);
  const sent = parseEntityJson(sentBody);
  if (stored === undefined || sent === undefined) return { result: "unresolved", reason: "the read-back or the sent body is not a JSON entity" };
  if (!entityMatches(sent, stored)) return { result: "differs" };
  const preferNoContent = /return-no-content/i.test(request.headers.get("prefer") ?? "");
  return { result: "applied", response: insertSuccess(request, found, preferNoContent ? 204 : 201) };
}

/**
 * Why a read-back answered with `status` rather than the entity. 403 is what a SAS
 * without Read permission gets (an Add-only SAS can insert but not read back).
 */
export function readBackRefusal(status: number): string {
  if (status === 403) return 'read-back refused (403): the credential lacks Read permission (a SAS needs "r")';
  if (status === 401) return "read-back refused (401): the credential was not accepted for a read";
  return `read-back answered ${status}`;
}

/**
 * The success the SDK would have got: 201 (with the entity) or 204, and the headers its
 * deserializers read (`etag`, `date`, `x-ms-request-id`, `x-ms-version`,
 * `x-ms-client-request-id`, `preference-applied`). The ETag is the stored entity's.
 */
function insertSuccess(request: PipelineRequest, found: PipelineResponse, status: 201 | 204): PipelineResponse {
  const headers = createHttpHeaders({
    date: found.headers.get("date") ?? new Date().toUTCString(),
    "x-ms-version": found.headers.get("x-ms-version") ?? request.headers.get("x-ms-version") ?? "2019-02-02",
    "cache-control": "no-cache",
    "content-length": "0",
  });
  const copy = (name: string, value: string | undefined): void => {
    if (value !== undefined) headers.set(name, value);
  };
  copy("x-ms-request-id", found.headers.get("x-ms-request-id"));
  copy("x-ms-client-request-id", request.headers.get("x-ms-client-request-id"));
  copy("etag", etagOf(found));
  if (status === 204) headers.set("preference-applied", "return-no-content");
  if (status === 201 && found.bodyAsText) {
    headers.set("content-type", found.headers.get("content-type") ?? "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
    headers.set("content-length", String(Buffer.byteLength(found.bodyAsText)));
    return { request, status, headers, bodyAsText: found.bodyAsText };
  }
  return { request, status, headers };
}

function etagOf(found: PipelineResponse): string | undefined {
  const header = found.headers.get("etag");
  if (header !== undefined) return header;
  const fromBody = parseEntityJson(found.bodyAsText ?? undefined)?.["odata.etag"];
  return typeof fromBody === "string" ? fromBody : undefined;
}
