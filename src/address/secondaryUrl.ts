import { describeValue } from "../validation/describeValue.js";
import { isPathStyleHost, parseStorageHost } from "./storageHost.js";

const SECONDARY_SUFFIX = "-secondary";

/**
 * The secondary's URL for `url`, changing nothing but the account root (so the path, the
 * query and any SAS stay byte for byte as signed): the given endpoint, or the account with
 * `-secondary` appended, in the host or in the first path segment. Undefined when no
 * secondary can be derived (a custom domain, Cosmos DB, a URL already on the secondary).
 */
export function secondaryUrlOf(url: string, endpoint: string | undefined): string | undefined {
  // With an endpoint given, any host will do (a custom domain, a private link): its origin is the root.
  const root = accountRoot(url, endpoint !== undefined);
  if (root === undefined) return undefined;
  const rest = url.slice(root.end);
  if (endpoint !== undefined) return endpoint + rest;
  if (root.account.endsWith(SECONDARY_SUFFIX)) return undefined;
  if (root.pathStyle) return `${url.slice(0, root.end)}${SECONDARY_SUFFIX}${rest}`;
  return `${url.slice(0, root.accountEnd)}${SECONDARY_SUFFIX}${url.slice(root.accountEnd)}`;
}

/**
 * The `secondaryReads.endpoint` option (`name` is its dotted path) read as an http(s) account
 * endpoint, without a trailing slash; a TypeError naming it otherwise. A query is refused unread:
 * it could hold a SAS.
 */
export function parseSecondaryEndpoint(name: string, value: unknown): string {
  if (typeof value !== "string") throw new TypeError(`${name} must be an http(s) URL string; got ${describeValue(value)}.`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Not echoed: a mistyped endpoint may carry a SAS.
    throw new TypeError(`${name} must be an absolute http(s) URL; got a string of ${value.length} characters that is not one.`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new TypeError(`${name} must be an http(s) URL; got protocol ${JSON.stringify(url.protocol)}.`);
  }
  if (url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new TypeError(`${name} must be an endpoint without query, fragment or credentials (the client's credential signs the secondary's requests too).`);
  }
  return `${url.origin}${url.pathname}`.replace(/\/+$/, "");
}

/** Where the account sits in a URL's text: `end` is where the account root ends (host, or host and first segment). */
interface AccountRoot {
  account: string;
  pathStyle: boolean;
  /** Where the account name ends in the host (host-style only). */
  accountEnd: number;
  end: number;
}

function accountRoot(url: string, anyHost: boolean): AccountRoot | undefined {
  if (typeof url !== "string") return undefined;
  const hostStart = url.indexOf("://") + 3;
  if (hostStart < 3) return undefined;
  const slash = url.indexOf("/", hostStart);
  const originEnd = slash === -1 ? firstOf(url, hostStart, "?#") : slash;
  let hostname: string;
  try {
    const origin = new URL(url.slice(0, originEnd));
    if ((origin.protocol !== "http:" && origin.protocol !== "https:") || origin.username !== "") return undefined;
    hostname = origin.hostname.toLowerCase();
  } catch {
    return undefined;
  }
  if (isPathStyleHost(hostname)) {
    if (slash === -1) return undefined;
    const end = firstOf(url, slash + 1, "/?#");
    const account = url.slice(slash + 1, end);
    return account === "" ? undefined : { account, pathStyle: true, accountEnd: end, end };
  }
  if (anyHost) return { account: hostname, pathStyle: false, accountEnd: originEnd, end: originEnd };
  // Host-style: only hosts whose `-secondary` twin exists by convention (not Cosmos DB, not a custom domain).
  if (parseStorageHost(hostname) === undefined || hostname.includes(".cosmos.azure.")) return undefined;
  const accountEnd = url.indexOf(".", hostStart);
  return { account: url.slice(hostStart, accountEnd), pathStyle: false, accountEnd, end: originEnd };
}

/** Index of the first of `chars` at or after `from`, or the text's length. */
function firstOf(text: string, from: number, chars: string): number {
  for (let i = from; i < text.length; i += 1) if (chars.includes(text[i] as string)) return i;
  return text.length;
}
