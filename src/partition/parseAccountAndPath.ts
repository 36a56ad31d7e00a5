import { parseStorageHost, stripSecondary } from "./detectServiceFromUrl.js";
import { safeDecodeURIComponent } from "./safeDecodeURIComponent.js";
import { plainPathEnd } from "./plainPath.js";

/** The account and the account-relative path of a storage URL. */
export interface AccountAndPath {
  /** The storage account name (without a `-secondary` suffix). */
  account: string;
  /**
   * The path after the account, split on `/` and percent-decoded segment by segment
   * (so an encoded `%2F` stays inside its segment). Empty for the account root.
   */
  pathSegments: string[];
}

/** Hosts an emulator listens on, where the account is the first path segment. */
const PATH_STYLE_HOSTNAMES = new Set(["localhost", "host.docker.internal"]);

/** What a URL's origin says, read once by the URL parser: the account, or that it is the first path segment. */
interface OriginInfo {
  pathStyle: boolean;
  /** The account of a host-style origin; "" for a path-style one. */
  account: string;
}

/** Origins seen; a client talks to one or two, so a small bound only matters for hostile input. */
const MAX_CACHED_ORIGINS = 64;
const origins = new Map<string, OriginInfo>();

/**
 * Splits a storage URL into account and path segments. Host-style URLs
 * (`https://myacct.table.core.windows.net/orders`) take the account from the host;
 * path-style URLs on an IP address, `localhost` or a single-label host such as a
 * container named `azurite` (`http://127.0.0.1:10002/devstoreaccount1/orders`) take
 * it from the first path segment. Any other host (a custom domain) cannot name its
 * account, so the whole hostname stands in for it, which still keys partitions apart.
 * Returns undefined for unparsable or non-HTTP(S) URLs and path-style URLs without an account.
 *
 * A URL whose origin was seen before, and whose path the URL parser would not rewrite,
 * skips the parser (it runs on every request); the answer is the same either way.
 */
export function parseAccountAndPath(url: string): AccountAndPath | undefined {
  const originEnd = plainOriginEnd(url);
  if (originEnd !== -1) {
    const info = origins.get(url.slice(0, originEnd));
    if (info !== undefined) {
      const pathEnd = plainPathEnd(url, originEnd);
      if (pathEnd !== -1) return fromParts(info, splitPath(url.slice(originEnd, pathEnd)));
    }
  }
  return parseAccountAndPathWithUrl(url);
}

/** {@link parseAccountAndPath} through the URL parser, remembering the origin when it can be told from the text. */
export function parseAccountAndPathWithUrl(url: string): AccountAndPath | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
  const hostname = parsed.hostname.toLowerCase();
  const pathStyle = isPathStyleHost(hostname);
  const info: OriginInfo = { pathStyle, account: pathStyle ? "" : (parseStorageHost(hostname)?.account ?? hostname) };
  const originEnd = plainOriginEnd(url);
  if (originEnd !== -1 && !origins.has(url.slice(0, originEnd))) {
    if (origins.size >= MAX_CACHED_ORIGINS) origins.delete(origins.keys().next().value as string);
    origins.set(url.slice(0, originEnd), info);
  }
  return fromParts(info, splitPath(parsed.pathname));
}

function fromParts(info: OriginInfo, segments: string[]): AccountAndPath | undefined {
  if (info.pathStyle) {
    const first = segments[0];
    if (first === undefined || first === "") return undefined;
    return { account: stripSecondary(first), pathSegments: segments.slice(1) };
  }
  if (info.account === "") return undefined;
  return { account: info.account, pathSegments: segments };
}

/**
 * Where `http://host[:port]` ends, when the URL starts with one written so plainly that
 * the parser reads the same host from it whatever follows (lower-case scheme, two
 * slashes, host and port characters only); -1 otherwise.
 */
export function plainOriginEnd(url: string): number {
  const start = url.startsWith("https://") ? 8 : url.startsWith("http://") ? 7 : -1;
  if (start === -1) return -1;
  let i = start;
  for (; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x2f || c === 0x3f || c === 0x23) break; // "/", "?", "#"
    if (!isPlainHostChar(c)) return -1;
  }
  return i === start ? -1 : i;
}

/** Letters, digits, ".", "-", "_", ":" and the brackets of an IPv6 literal. */
function isPlainHostChar(c: number): boolean {
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x3a) ||
    c === 0x2e ||
    c === 0x2d ||
    c === 0x5f ||
    c === 0x5b ||
    c === 0x5d
  );
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
