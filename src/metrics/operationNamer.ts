import type { StorageService } from "../partition/partitionScope.js";
import { safeDecodeURIComponent } from "../partition/safeDecodeURIComponent.js";
import { parseAccountAndPath } from "../partition/parseAccountAndPath.js";
import { upperCaseMethod } from "../partition/upperCaseMethod.js";
import {
  operationFromParts,
  searchOf,
  storageOperationName,
  tableOperationOf,
  tableOperationOfShape,
  type OperationRequest,
  type StorageOperation,
} from "./storageOperation.js";

/**
 * {@link storageOperationName} with a fast path for one client's requests: it remembers the
 * URL prefix up to the account-relative path (`http://127.0.0.1:10002/devstoreaccount1/`,
 * `https://acct.table.core.windows.net/`), so a request under it is named without a URL
 * parse (about 300 ns saved per operation). Tables requests of the common one-segment
 * shapes are then named from one scan of the URL (and a slice of the segment when it has
 * no parentheses), without splitting or decoding. Any other URL takes the full, pure path; the answers are the same either way
 * (unit tests, random paths included, hold the two to it).
 */
export class OperationNamer {
  readonly #service: StorageService;
  #base: string | undefined;

  constructor(service: StorageService) {
    this.#service = service;
  }

  /** The operation `request` performs. */
  name(request: OperationRequest): StorageOperation {
    const url = request.url;
    const base = this.#base;
    // `lastIndexOf(base, 0)` is `startsWith(base)`, at a third of its cost on Node 24.
    if (base !== undefined && url.lastIndexOf(base, 0) === 0) {
      if (this.#service === "table") {
        const named = plainTableOperation(request, url, base.length);
        if (named !== undefined) return named;
      }
      if (!isPlainPath(url, base.length)) return storageOperationName(this.#service, request);
      return operationFromParts(this.#service, {
        method: upperCaseMethod(request.method),
        segments: relativeSegments(url, base.length),
        search: searchOf(url),
        headers: request.headers,
      });
    }
    this.#base ??= accountBase(url);
    return storageOperationName(this.#service, request);
  }
}

/**
 * The URL text before the account-relative path, or undefined when it cannot be told
 * exactly (the fast path then stays off for this URL).
 */
export function accountBase(url: string): string | undefined {
  const parsed = parseAccountAndPath(url);
  if (parsed === undefined) return undefined;
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return undefined;
  }
  if (!url.startsWith(`${origin}/`)) return undefined; // userinfo, default port or case the parser rewrote
  const rawPath = url.slice(origin.length + 1).split(/[?#]/, 1)[0] ?? "";
  const rawSegments = rawPath === "" ? [] : rawPath.split("/");
  // Path-style (emulator) URLs carry the account as the first segment.
  if (parsed.pathSegments.length === rawSegments.length) return `${origin}/`;
  const account = rawSegments[0];
  if (parsed.pathSegments.length !== rawSegments.length - 1 || account === undefined || account === "") return undefined;
  return `${origin}/${account}/`;
}

/**
 * The operation of a Tables request whose account-relative path, from `from` to `?`, `#` or
 * the URL's end, is one segment of a common shape (`orders(...)`, `orders()`, `orders`,
 * `$batch`, `Tables`) whose naming features (see {@link tableOperationOf}: the table-name
 * part up to the first `(`, a closing `)`, a non-empty inside) read the same raw as they do
 * percent-decoded after a URL parse; undefined otherwise (the caller falls back). With
 * parentheses, the shape is read in place, without slicing the segment out.
 *
 * The name part must be plain printable ASCII without `%`, `/` or a leading `.`, and a `(`
 * must be matched by a `)` ending the path. Inside the parentheses anything goes but `/`,
 * `\` (more segments, dot segments) and tab, LF, CR (dropped by the parser): what the parser
 * percent-encodes, decoding gives back, and a failed decode only changes text inside them.
 */
function plainTableOperation(request: OperationRequest, url: string, from: number): StorageOperation | undefined {
  let open = from;
  for (; open < url.length; open++) {
    const c = url.charCodeAt(open);
    if (c === 0x28) break; // "("
    if (c === 0x3f || c === 0x23) break; // "?", "#"
    if (c >= 0x80 || NAME_CHARS[c] !== 1) return undefined;
  }
  if (open > from && url.charCodeAt(from) === 0x2e) return undefined; // ".", "..", ".x"
  if (url.charCodeAt(open) !== 0x28) {
    // No parentheses (or an empty path); no `?` before `open`, so any query starts there.
    const search = open === url.length ? "" : searchOf(url);
    return tableOperationOf(upperCaseMethod(request.method), url.slice(from, open), search, request.headers);
  }
  // One regex scan for the rest: less than half the cost of a charCodeAt loop on Node 24.
  AFTER_OPEN_STOP.lastIndex = open;
  let end = url.length;
  if (AFTER_OPEN_STOP.test(url)) {
    end = AFTER_OPEN_STOP.lastIndex - 1;
    const c = url.charCodeAt(end);
    if (c !== 0x3f && c !== 0x23) return undefined;
  }
  if (url.charCodeAt(end - 1) !== 0x29) return undefined; // ")"
  const isTables = open - from === 6 && url.startsWith("Tables", from);
  const search = end === url.length ? "" : searchOf(url);
  return tableOperationOfShape(upperCaseMethod(request.method), isTables, end - open > 2 ? "key" : "empty", search, request.headers);
}

/**
 * 1 for the ASCII a table name may hold as written: printable, and none of `%`, `/`, `"`,
 * `<`, `>`, `\`, `^`, backtick, `{`, `|`, `}` (decoded, a separator, or encoded or rewritten
 * by the URL parser).
 */
const NAME_CHARS = new Uint8Array(128);
for (let c = 0x21; c < 0x7f; c++) NAME_CHARS[c] = '%/"<>\\^`{|}'.includes(String.fromCharCode(c)) ? 0 : 1;

/** What ends the path after a `(` (`?`, `#`) or keeps it off the fast path (`/`, `\`, tab, LF, CR). */
const AFTER_OPEN_STOP = /[\t\n\r/\\?#]/g;

/**
 * No dot segments (plain or `%2e`) or backslashes, which a URL parser would rewrite, and no
 * tab, LF, CR or trailing space or control, which it drops. Native searches: this runs per operation.
 */
function isPlainPath(url: string, from: number): boolean {
  return (
    url.indexOf("/.", from - 1) === -1 &&
    url.indexOf("\\", from) === -1 &&
    url.indexOf("%2e", from) === -1 &&
    url.indexOf("%2E", from) === -1 &&
    url.indexOf("\t", from) === -1 &&
    url.indexOf("\n", from) === -1 &&
    url.indexOf("\r", from) === -1 &&
    url.charCodeAt(url.length - 1) > 0x20
  );
}

function relativeSegments(url: string, from: number): string[] {
  const question = url.indexOf("?", from);
  const hash = url.indexOf("#", from);
  const end = question === -1 ? (hash === -1 ? url.length : hash) : hash === -1 ? question : Math.min(question, hash);
  if (end === from) return [];
  const segments = url.slice(from, end).split("/");
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as string;
    if (segment.includes("%")) segments[i] = safeDecodeURIComponent(segment);
  }
  return segments;
}
