import { randomUUID } from "node:crypto";
import { storageErrorResponse } from "./storageErrorResponse.js";

/** What {@link changesetErrorResponse} needs to know. */
export interface ChangesetErrorInput {
  /** The failed operation's status inside the changeset, e.g. 503. */
  status: number;
  /** Its error code, e.g. `ServerBusy`. */
  code: string;
  /** The client's `x-ms-client-request-id`, echoed back as Azure does. */
  clientRequestId?: string | undefined;
  /** The client's `x-ms-version`, echoed back. */
  version?: string | undefined;
  /** Headers of the failed sub-response, e.g. a retry hint. */
  changesetHeaders?: Record<string, string>;
}

/** A `$batch` answer: 202 Accepted, the transaction's failure inside. */
export interface ChangesetErrorResponse {
  status: 202;
  headers: Record<string, string>;
  body: string;
}

/** Reason phrases for the statuses a failed changeset is simulated with most. */
const REASONS: Record<number, string> = {
  400: "Bad Request",
  404: "Not Found",
  409: "Conflict",
  412: "Precondition Failed",
  429: "Too Many Requests",
  500: "Internal Server Error",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/**
 * Builds the answer Azure Tables gives an entity group transaction whose changeset failed
 * ("Performing entity group transactions", learn.microsoft.com): 202 Accepted, a
 * `multipart/mixed` batch response holding one changeset response, which holds the single
 * failed operation's HTTP response with its OData JSON error (the message prefixed with the
 * operation's index, `0:`). Shaped like Azure's and Azurite's, so the Tables SDK reads it as
 * it reads theirs (it throws a `RestError` with the inner status and code).
 */
export function changesetErrorResponse(input: ChangesetErrorInput): ChangesetErrorResponse {
  const inner = storageErrorResponse({ service: "table", status: input.status, code: input.code, method: "POST" });
  const requestId = inner.headers["x-ms-request-id"] as string;
  const batch = `batchresponse_${randomUUID()}`;
  const changeset = `changesetresponse_${randomUUID()}`;
  const subHeaders: Record<string, string> = {
    "Content-ID": "1",
    "X-Content-Type-Options": "nosniff",
    "DataServiceVersion": "3.0;",
    "Content-Type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
    ...input.changesetHeaders,
  };
  const lines = [
    `--${batch}`,
    `Content-Type: multipart/mixed; boundary=${changeset}`,
    "",
    `--${changeset}`,
    "Content-Type: application/http",
    "Content-Transfer-Encoding: binary",
    "",
    `HTTP/1.1 ${input.status} ${REASONS[input.status] ?? "Error"}`,
    ...Object.entries(subHeaders).map(([name, value]) => `${name}: ${value}`),
    "",
    withOperationIndex(inner.body),
    `--${changeset}--`,
    `--${batch}--`,
    "",
  ];
  const body = lines.join("\r\n");
  const headers: Record<string, string> = {
    "content-type": `multipart/mixed; boundary=${batch}`,
    "cache-control": "no-cache",
    "x-ms-request-id": requestId,
    "x-content-type-options": "nosniff",
    server: inner.headers.server as string,
    date: inner.headers.date as string,
    "content-length": String(Buffer.byteLength(body)),
  };
  if (input.version !== undefined) headers["x-ms-version"] = input.version;
  if (input.clientRequestId !== undefined) headers["x-ms-client-request-id"] = input.clientRequestId;
  return { status: 202, headers, body };
}

/** Azure starts a failed changeset's message with the failed operation's index: `0:The server is busy.` */
function withOperationIndex(jsonBody: string): string {
  const parsed = JSON.parse(jsonBody) as { "odata.error": { message: { value: string } } };
  parsed["odata.error"].message.value = `0:${parsed["odata.error"].message.value}`;
  return JSON.stringify(parsed);
}
