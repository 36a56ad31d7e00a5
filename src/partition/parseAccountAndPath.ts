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
 * (`https://myacct.table.core.windows.net/orders`) take the account from the host;
 * path-style URLs on an IP address, `localhost` or a single-label host such as a
 * container named `azurite` (`http://127.0.0.1:10002/devstoreaccount1/orders`) take
 * it from the first path segment. Any other host (a custom domain) cannot name its
 * account, so the whole hostname stands in for it, which still keys partitions apart.
 * Returns undefined for unparsable or non-HTTP(S) URLs and path-style URLs without an account.
 */
export function parseAccountAndPath(url: string): AccountAndPath | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return undefined;
  const hostname = parsed.hostname.toLowerCase();
  const segments = splitPath(parsed.pathname);
  if (isPathStyleHost(hostname)) {
    const first = segments[0];
    if (first === undefined || first === "") return undefined;
    return { account: stripSecondary(first), pathSegments: segments.slice(1), hostService: undefined };
  }
  const host = parseStorageHost(hostname);
  return { account: host?.account ?? hostname, pathSegments: segments, hostService: host?.service };
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
