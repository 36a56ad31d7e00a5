import { parseStorageHost, stripSecondary } from "./detectServiceFromUrl.js";
import type { StorageService } from "./partitionScope.js";
import { safeDecodeURIComponent } from "./safeDecodeURIComponent.js";

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
   * `detectServiceFromUrl` reads it; undefined for path-style and custom-domain hosts.
   */
  hostService: StorageService | undefined;
}

/** Hosts an emulator listens on, where the account is the first path segment. */
const PATH_STYLE_HOSTNAMES = new Set(["localhost", "host.docker.internal"]);

/**
 * Splits a storage URL into account and path segments. Host-style URLs
 * (`https://acct.table.core.windows.net/orders`) name the account in the host;
 * path-style ones (Azurite, `http://127.0.0.1:10002/devstoreaccount1/orders`) in the
 * first path segment. Undefined for what is not an http(s) URL with an account.
 *
 * Speed, kept inside this function (STYLE.md §10): the WHATWG URL parser costs about
 * 600 ns per request with its getters, the rest of naming an operation about 100. A client
 * talks to one endpoint, so what the parser says about the text before the path (the
 * origin) is kept, and a path made only of characters the parser leaves as they are is
 * split by hand; anything else goes through the parser. Measured on Node 24: 880 ns →
 * 190 ns per `address.operation` for an entity URL (tmp benchmark in the closing note of issue 14).
 */
export function parseAccountAndPath(url: string): AccountAndPath | undefined {
  if (typeof url !== "string") return undefined;
  const origin = originOf(url);
  const path = origin === undefined ? undefined : plainPathOf(url, origin.pathStart);
  if (origin === undefined || path === undefined) return parseWithUrlParser(url);
  return fromParts(origin.info, path === "" ? [] : path.split("/").map(safeDecodeURIComponent));
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

/** The last origin looked up: nearly every request of a process has the same one. */
let last: { origin: string; info: OriginInfo | null } = { origin: "", info: null };

function originOf(url: string): { info: OriginInfo; pathStart: number } | undefined {
  const length = last.origin.length;
  if (length > 0 && url.startsWith(last.origin) && url.charCodeAt(length) === SLASH) {
    return last.info === null ? undefined : { info: last.info, pathStart: length };
  }
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
  return info === null ? undefined : { info, pathStart };
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
 * The path after the origin's `/`, before any query or fragment, when the URL parser would
 * leave it as it is: only unreserved and sub-delimiter characters, `:`, `@`, `/` and
 * percent escapes, and no `.` or `..` segment (which the parser resolves). Undefined otherwise.
 */
function plainPathOf(url: string, pathStart: number): string | undefined {
  const query = url.indexOf("?", pathStart);
  const hash = url.indexOf("#", pathStart);
  const end = Math.min(query === -1 ? url.length : query, hash === -1 ? url.length : hash);
  const path = url.slice(pathStart + 1, end);
  if (!PLAIN_PATH.test(path)) return undefined;
  if ((path.includes(".") || path.includes("%2")) && DOT_SEGMENT.test(path)) return undefined;
  return path;
}

/** What the parser copies as it is (a `%` not followed by two hex digits too: it keeps it). */
const PLAIN_PATH = /^[\w\-.~!$&'()*+,;=:@/%]*$/;
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e){1,2}(?:\/|$)/i;

function fromParts(origin: OriginInfo, segments: string[]): AccountAndPath | undefined {
  if (!origin.pathStyle) return { account: origin.account, pathSegments: segments, hostService: origin.hostService };
  const first = segments[0];
  if (first === undefined || first === "") return undefined;
  return { account: stripSecondary(first), pathSegments: segments.slice(1), hostService: undefined };
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

function isPathStyleHost(hostname: string): boolean {
  if (PATH_STYLE_HOSTNAMES.has(hostname)) return true;
  if (hostname.startsWith("[")) return true; // IPv6 literal
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(hostname)) return true;
  return !hostname.includes(".");
}

function splitPath(pathname: string): string[] {
  if (pathname === "" || pathname === "/") return [];
  const withoutLeadingSlash = pathname.startsWith("/") ? pathname.slice(1) : pathname;
  return withoutLeadingSlash.split("/").map(safeDecodeURIComponent);
}
