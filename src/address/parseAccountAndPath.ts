import { isPathStyleHost, parseStorageHost, stripSecondary } from "./storageHost.js";
import type { StorageService } from "./partitionScope.js";
import { safeDecodeURIComponent } from "./urlText.js";

/** The account, the account-relative path and the host's service of a storage URL. */
export interface AccountAndPath {
  /** The storage account name (without a `-secondary` suffix). */
  account: string;
  /**
   * The path after the account, split on `/` and percent-decoded segment by segment
   * (so an encoded `%2F` stays inside its segment). Empty for the account root.
   */
  pathSegments: string[];
  /**
   * The service the hostname names (`myacct.table.core.windows.net`: `"table"`), as
   * `parseStorageHost` reads it; undefined for path-style and custom-domain hosts.
   */
  hostService: StorageService | undefined;
}

/**
 * Splits a storage URL into account and path segments. Host-style URLs
 * (`https://acct.table.core.windows.net/orders`) name the account in the host;
 * path-style ones (Azurite, `http://127.0.0.1:10002/devstoreaccount1/orders`) in the
 * first path segment. Undefined for what is not an http(s) URL with an account.
 *
 * Speed, kept inside this function, behind the interface it would have without it: the
 * WHATWG URL parser with its getters is the dearest step of an attempt's bookkeeping. A
 * client talks to one endpoint, so what the parser says about the text before the path (the
 * origin) is kept, and a path made only of characters the parser leaves as they are is split
 * by hand; anything else goes through the parser (figures in docs/benchmarks.md, "Why the
 * code is as it is").
 */
export function parseAccountAndPath(url: string): AccountAndPath | undefined {
  if (typeof url !== "string") return undefined;
  const info = originOf(url);
  const segments = info === undefined ? undefined : splitPlainPath(url, last.origin.length + 1);
  if (info === undefined || segments === undefined) return parseWithUrlParser(url);
  return fromParts(info, segments);
}

/** What the parser says about one origin: where its account comes from, and the host's service. */
interface OriginInfo {
  pathStyle: boolean;
  /** Host-style: the account the host names. */
  account: string;
  hostService: StorageService | undefined;
}

/** The one cache of the address reader: origins seen, a handful per process; cleared when full. */
const origins = new Map<string, OriginInfo | null>();
const MAX_ORIGINS = 64;
const SLASH = 47;
const DOT = 46;

/** The last origin looked up (nearly every request of a process has the same one): {@link originOf} sets it. */
let last: { origin: string; info: OriginInfo | null } = { origin: "", info: null };

/** The origin's information, when the URL has a path and the parser reads its origin plainly; `last` is then this origin. */
function originOf(url: string): OriginInfo | undefined {
  const length = last.origin.length;
  if (length > 0 && url.startsWith(last.origin) && url.charCodeAt(length) === SLASH) return last.info ?? undefined;
  const hostStart = url.indexOf("://");
  if (hostStart === -1) return undefined;
  const pathStart = url.indexOf("/", hostStart + 3);
  if (pathStart === -1) return undefined;
  const origin = url.slice(0, pathStart);
  let info = origins.get(origin);
  if (info === undefined) {
    info = originInfo(origin);
    if (origins.size >= MAX_ORIGINS) origins.clear();
    origins.set(origin, info);
  }
  last = { origin, info };
  return info ?? undefined;
}

function originInfo(origin: string): OriginInfo | null {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return null;
  }
  // Userinfo, odd ports or anything the parser rewrites: leave such an origin to the parser.
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || `${parsed.origin}` !== origin.toLowerCase()) return null;
  return hostInfo(parsed.hostname.toLowerCase());
}

/** Where a host puts the account: in the path (an emulator) or in the host name, with its service. */
function hostInfo(hostname: string): OriginInfo {
  if (isPathStyleHost(hostname)) return { pathStyle: true, account: "", hostService: undefined };
  const host = parseStorageHost(hostname);
  return { pathStyle: false, account: host?.account ?? hostname, hostService: host?.service };
}

/**
 * The path from `start` to any query, split on `/` and percent-decoded segment
 * by segment, when the URL parser would leave it as it is: only unreserved and
 * sub-delimiter characters, `:`, `@`, `/` and percent escapes (a `%` not followed by two hex
 * digits too: the parser keeps it), and no `.` or `..` segment (which the parser resolves).
 * Undefined otherwise.
 */
function splitPlainPath(url: string, start: number): string[] | undefined {
  const query = url.indexOf("?", start);
  const end = query === -1 ? url.length : query;
  const path = url.slice(start, end);
  if (NOT_PLAIN.test(path)) return undefined;
  const segments: string[] = [];
  for (let from = 0; ; ) {
    const slash = path.indexOf("/", from);
    const segment = slash === -1 ? path.slice(from) : path.slice(from, slash);
    const escaped = segment.includes("%");
    if ((segment.charCodeAt(0) === DOT || escaped) && isDotSegment(segment)) return undefined;
    segments.push(escaped ? safeDecodeURIComponent(segment) : segment);
    if (slash === -1) return segments.length === 1 && segments[0] === "" ? [] : segments;
    from = slash + 1;
  }
}

/** Any character a plain path does not hold (see {@link splitPlainPath}); a URL with a fragment (`#`) goes to the parser too. */
const NOT_PLAIN = /[^\w\-.~!$&'()*+,;=:@/%]/;

/** `.` or `..`, spelled plainly or with `%2e`: a segment the parser resolves. */
function isDotSegment(segment: string): boolean {
  return segment.length <= 6 && DOT_SEGMENT.test(segment);
}
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

function fromParts(origin: OriginInfo, segments: string[]): AccountAndPath | undefined {
  if (!origin.pathStyle) return { account: origin.account, pathSegments: segments, hostService: origin.hostService };
  const first = segments.shift();
  if (first === undefined || first === "") return undefined;
  return { account: stripSecondary(first), pathSegments: segments, hostService: undefined };
}

/** Any URL, through the WHATWG parser. */
function parseWithUrlParser(url: string): AccountAndPath | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
  return fromParts(hostInfo(parsed.hostname.toLowerCase()), splitPath(parsed.pathname));
}

function splitPath(pathname: string): string[] {
  if (pathname === "" || pathname === "/") return [];
  const withoutLeadingSlash = pathname.startsWith("/") ? pathname.slice(1) : pathname;
  return withoutLeadingSlash.split("/").map(safeDecodeURIComponent);
}
