import { randomUUID } from "node:crypto";
import type { StorageService } from "../../address/partitionScope.js";

/** An error answer, as Azure Storage would send it. */
export interface StorageErrorResponse {
  /** The HTTP status. */
  status: number;
  /** Response headers, including `x-ms-error-code` and `x-ms-request-id`. */
  headers: Record<string, string>;
  /** The body: Tables' OData JSON or Blob/Queue XML; empty for HEAD. */
  body: string;
}

/** What {@link storageErrorResponse} needs to know. */
export interface StorageErrorInput {
  /** Which service's error format to use. */
  service: StorageService;
  /** The HTTP status. */
  status: number;
  /** The error code, e.g. `ServerBusy`. */
  code: string;
  /** The request method; HEAD answers carry no body, like the real service's. */
  method: string;
  /** The client's `x-ms-client-request-id`, echoed back as Azure does. */
  clientRequestId?: string | undefined;
  /** The client's `x-ms-version`, echoed back. */
  version?: string | undefined;
  /** Extra headers, e.g. a retry hint. */
  extraHeaders?: Record<string, string>;
  /** The time to stamp; defaults to now. */
  date?: Date;
}

/** The messages Azure uses for the codes the simulator sends most. */
const MESSAGES: Record<string, string> = {
  ServerBusy: "The server is busy.",
  OperationTimedOut: "Operation could not be completed within the specified time.",
  InternalError: "The server encountered an internal error. Please retry the request.",
  AuthorizationFailure: "This request is not authorized to perform this operation.",
  NotImplemented: "The requested operation is not implemented on the specified resource.",
  ResourceNotFound: "The specified resource does not exist.",
};

const SERVER_HEADERS: Record<StorageService, string> = {
  table: "Windows-Azure-Table/1.0 Microsoft-HTTPAPI/2.0",
  blob: "Windows-Azure-Blob/1.0 Microsoft-HTTPAPI/2.0",
  queue: "Windows-Azure-Queue/1.0 Microsoft-HTTPAPI/2.0",
};

/** A likely error code for a status, when a rule names none. */
export function defaultErrorCode(status: number): string {
  switch (status) {
    case 400:
      return "InvalidInput";
    case 403:
      return "AuthorizationFailure";
    case 404:
      return "ResourceNotFound";
    case 409:
      return "Conflict";
    case 412:
      return "ConditionNotMet";
    case 429:
    case 503:
      return "ServerBusy";
    case 500:
      return "InternalError";
    case 501:
      return "NotImplemented";
    case 504:
      return "OperationTimedOut";
    default:
      return status >= 500 ? "InternalError" : "InvalidInput";
  }
}

/**
 * Builds the error answer Azure Storage sends: `x-ms-error-code` and `x-ms-request-id`
 * headers, and a body whose message ends in `RequestId:` and `Time:` lines. Tables
 * answers in OData JSON (`{"odata.error":{...}}`), Blob and Queue in XML.
 */
export function storageErrorResponse(input: StorageErrorInput): StorageErrorResponse {
  const requestId = randomUUID();
  const date = input.date ?? new Date();
  const message = `${MESSAGES[input.code] ?? `Simulated ${input.code}.`}\nRequestId:${requestId}\nTime:${azureTimestamp(date)}`;
  const isTable = input.service === "table";
  const body = isTable ? tableErrorBody(input.code, message) : xmlErrorBody(input.code, message);
  const headers: Record<string, string> = {
    "content-type": isTable ? "application/json;odata=minimalmetadata;streaming=true;charset=utf-8" : "application/xml",
    "x-ms-error-code": input.code,
    "x-ms-request-id": requestId,
    server: SERVER_HEADERS[input.service],
    date: date.toUTCString(),
    ...input.extraHeaders,
  };
  if (input.version !== undefined) headers["x-ms-version"] = input.version;
  if (input.clientRequestId !== undefined) headers["x-ms-client-request-id"] = input.clientRequestId;
  const sentBody = input.method.toUpperCase() === "HEAD" ? "" : body;
  headers["content-length"] = String(Buffer.byteLength(sentBody));
  return { status: input.status, headers, body: sentBody };
}

function tableErrorBody(code: string, message: string): string {
  return JSON.stringify({ "odata.error": { code, message: { lang: "en-US", value: message } } });
}

function xmlErrorBody(code: string, message: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><Error><Code>${escapeXml(code)}</Code><Message>${escapeXml(message)}</Message></Error>`;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Azure stamps error messages with seven fractional digits: `2024-01-02T03:04:05.6780000Z`. */
function azureTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, ".$10000Z");
}
