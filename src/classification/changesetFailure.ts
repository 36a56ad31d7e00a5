// Reads the failed changeset out of a Tables `$batch` answer (202 Accepted, multipart/mixed).
// Pure, bounded and total: a hostile or broken body costs at most MAX_BATCH_SCAN_CHARS of
// linear scanning and yields undefined, never an exception.
import { parseRetryAfterInMs } from "../timing/retryAfter.js";
import { isRecord } from "../validation/optionSchema.js";

/** A changeset that failed inside a `$batch` answered 202: its status, error code and retry hint, as if top level. */
export interface ChangesetFailure {
  /** The failed operation's HTTP status (100-599), e.g. 503 or 409. */
  readonly status: number;
  /**
   * Its error code: the sub-response's `x-ms-error-code` header, else `odata.error.code` from
   * its JSON body (or `<code>` from an old XML one). Only plain codes (letters and digits, at
   * most 64) are kept: the text is the server's, and it reaches logs and metric labels.
   */
  readonly errorCode: string | undefined;
  /** Its `x-ms-retry-after-ms`, `retry-after-ms` or `Retry-After`, in milliseconds. */
  readonly retryAfterInMs: number | undefined;
}

/**
 * How much of a `$batch` answer is read. A failed changeset holds one sub-response (Azure
 * answers for the failing operation only), a few hundred bytes; a successful one holds one
 * per operation (100 at most), ~500 bytes each without echoed content. A failure past this
 * is not seen: the answer is left as it is (the SDK throws on it, as without this package).
 */
export const MAX_BATCH_SCAN_CHARS = 64 * 1024;
/** A sub-response's headers and error body are small; a longer one is not ours to read. */
const MAX_PART_CHARS = 16 * 1024;
/** Failed Dependency: another operation's failure, not a cause of its own. */
const FAILED_DEPENDENCY = 424;
const PLAIN_ERROR_CODE = /^[A-Za-z0-9]{1,64}$/;
const STATUS_LINE_PREFIX = "HTTP/1.";
/** The headers a failure is read from. */
const WANTED_HEADERS = new Set(["x-ms-error-code", "x-ms-retry-after-ms", "retry-after-ms", "retry-after"]);

/**
 * The failed changeset in a `$batch` answer's text, or undefined when every sub-response
 * succeeded (or none could be read). Sub-responses are found by their status lines
 * (`HTTP/1.1 409 Conflict` at the start of a line), not by boundary names: a status line is
 * distinctive, and boundaries are the server's to choose. The first status of 400 or more
 * wins, a 424 (a dependency's failure) only when no other is there.
 */
export function readChangesetFailure(body: string, now: number = Date.now()): ChangesetFailure | undefined {
  // Searches run on the bounded prefix: a huge body without a status line costs no more than a small one.
  const text = body.length > MAX_BATCH_SCAN_CHARS ? body.slice(0, MAX_BATCH_SCAN_CHARS) : body;
  const end = text.length;
  let dependency: number | undefined;
  for (let at = text.indexOf(STATUS_LINE_PREFIX); at !== -1; at = text.indexOf(STATUS_LINE_PREFIX, at + 1)) {
    const status = statusAt(text, at, end);
    if (status === undefined || status < 400) continue;
    if (status !== FAILED_DEPENDENCY) return failureAt(text, at, end, status, now);
    dependency ??= at;
  }
  return dependency === undefined ? undefined : failureAt(text, dependency, end, FAILED_DEPENDENCY, now);
}

/** The status of a status line starting at `at` (`HTTP/1.0` or `HTTP/1.1`, a space, three digits), at the start of a line. */
function statusAt(body: string, at: number, end: number): number | undefined {
  if (at > 0 && body.charCodeAt(at - 1) !== 10 /* \n */) return undefined;
  if (at + 12 > end) return undefined;
  const minor = body[at + 7];
  if ((minor !== "0" && minor !== "1") || body[at + 8] !== " ") return undefined;
  const digits = body.slice(at + 9, at + 12);
  if (!/^[1-5]\d\d$/.test(digits)) return undefined;
  const after = body.charCodeAt(at + 12);
  // "HTTP/1.1 4091" is not a status line; the reason phrase follows a space, or the line ends.
  if (at + 12 < end && after !== 32 && after !== 13 && after !== 10) return undefined;
  return Number(digits);
}

function failureAt(body: string, at: number, end: number, status: number, now: number): ChangesetFailure {
  const part = body.slice(at, Math.min(end, at + MAX_PART_CHARS));
  const lines = part.split("\n");
  const headers = new Map<string, string>();
  let index = 1;
  for (; index < lines.length; index++) {
    const line = trimCarriageReturn(lines[index] as string);
    if (line === "") break;
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (WANTED_HEADERS.has(name) && !headers.has(name)) headers.set(name, line.slice(colon + 1).trim());
  }
  const errorCode = plainCode(headers.get("x-ms-error-code")) ?? plainCode(errorCodeOfBody(bodyLines(lines, index + 1)));
  const retryAfterInMs = headers.size === 0 ? undefined : parseRetryAfterInMs({ get: (name) => headers.get(name.toLowerCase()) }, now);
  return { status, errorCode, retryAfterInMs };
}

/** The part's body: the lines after its headers, up to the next boundary (`--...`). */
function bodyLines(lines: string[], from: number): string {
  const kept: string[] = [];
  for (let index = from; index < lines.length; index++) {
    const line = trimCarriageReturn(lines[index] as string);
    if (line.startsWith("--")) break;
    kept.push(line);
  }
  return kept.join("\n").trim();
}

/** `odata.error.code` of a JSON error body, or `<code>` of an XML one (Atom payloads, before 2015-12-11). */
function errorCodeOfBody(text: string): string | undefined {
  if (text.startsWith("{")) {
    try {
      const parsed: unknown = JSON.parse(text);
      const error = isRecord(parsed) ? parsed["odata.error"] : undefined;
      const code = isRecord(error) ? error.code : undefined;
      return typeof code === "string" ? code : undefined;
    } catch {
      return undefined;
    }
  }
  return /<code>([A-Za-z0-9]{1,64})<\/code>/.exec(text)?.[1];
}

function plainCode(code: string | undefined): string | undefined {
  return code !== undefined && PLAIN_ERROR_CODE.test(code) ? code : undefined;
}

function trimCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
