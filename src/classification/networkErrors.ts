/**
 * Error codes of network failures that mean "the attempt ran out of time".
 * Node's `ETIMEDOUT`/`ESOCKETTIMEDOUT`, undici's timeout codes.
 */
export const TIMEOUT_ERROR_CODES: ReadonlySet<string> = new Set([
  "ETIMEDOUT",
  "ESOCKETTIMEDOUT",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/**
 * Error codes of network failures a later attempt can outlive: resets, refused or dropped
 * connections, DNS hiccups, the SDK's catch-all `REQUEST_SEND_ERROR`, and its `PARSE_ERROR`,
 * which the Node HTTP client throws when a response body breaks off while being read. Wider
 * than the SDK's list (which leaves out EPIPE, REQUEST_SEND_ERROR and PARSE_ERROR).
 */
export const TRANSIENT_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "EPIPE",
  "EAI_AGAIN",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
  "REQUEST_SEND_ERROR",
  "UND_ERR_SOCKET",
  "UND_ERR_CLOSED",
  "ERR_STREAM_PREMATURE_CLOSE",
  "PARSE_ERROR",
]);

/** Node's HTTP parser codes (`HPE_INVALID_CONSTANT`, `HPE_HEADER_OVERFLOW`, ...): the answer was not valid HTTP. */
const HTTP_PARSER_ERROR_PREFIX = "HPE_";

/** Messages Node uses for a connection that closed before the response (no `code` set on some paths). */
const TRANSIENT_MESSAGE = /socket hang up|ECONNRESET|premature close|other side closed/i;

/** The `code` of an error-like value, if it has a string one. */
export function errorCodeOf(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? code : undefined;
}

/** True when the error is an abort (`AbortError` by name, as the SDK and DOM raise it). */
export function isAbortError(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { name?: unknown }).name === "AbortError";
}

/**
 * Classifies a thrown network error as `timeout` or `transient`, or returns undefined
 * when it is not a recognised network failure. An answer that could not be read (a body
 * cut mid-way, `PARSE_ERROR`; not valid HTTP, `HPE_*`) is `transient`: the request reached
 * the store, so for a write the outcome is unknown (see `isUnknownOutcome`), and a read is
 * simply asked again.
 */
export function classifyNetworkError(error: unknown): "timeout" | "transient" | undefined {
  const code = errorCodeOf(error);
  if (code !== undefined && TIMEOUT_ERROR_CODES.has(code)) return "timeout";
  if (code !== undefined && (TRANSIENT_ERROR_CODES.has(code) || code.startsWith(HTTP_PARSER_ERROR_PREFIX))) return "transient";
  if (typeof error === "object" && error !== null) {
    const { name, message } = error as { name?: unknown; message?: unknown };
    if (name === "TimeoutError") return "timeout";
    if (typeof message === "string" && TRANSIENT_MESSAGE.test(message)) return "transient";
  }
  return undefined;
}
