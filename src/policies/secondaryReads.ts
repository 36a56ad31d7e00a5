// Reads from the secondary region of an RA-GRS / RA-GZRS account (docs/secondary-reads.md):
// which requests may go there and the secondary's URL. The retry loop sends the attempt, as it
// sends the primary's, when decideNext says so (an open circuit, a failed primary attempt).
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { AttemptResult } from "../classification/attemptResult.js";
import { parseStorageHost } from "../partition/detectServiceFromUrl.js";
import { isPathStyleHost } from "../partition/parseAccountAndPath.js";
import type { StorageOperation } from "../address/storageOperation.js";
import { describeValue } from "../validation/describeValue.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";

/** Options of `secondaryReads`: where the secondary is. */
export interface SecondaryReadOptions {
  /**
   * The secondary's account endpoint, e.g. `https://myacct-secondary.blob.core.windows.net`,
   * or Azurite's `http://127.0.0.1:10002/devstoreaccount1-secondary`. An http(s) URL without
   * query or fragment. Defaults to the client's own endpoint with `-secondary` appended to
   * the account name: in the host (`myacct-secondary.table.core.windows.net`), or in the
   * first path segment of a path-style URL (Azurite's `/devstoreaccount1-secondary`).
   */
  endpoint?: string;
}

/** `secondaryReads` after validation: the endpoint given, or undefined to derive it from each request's URL. */
export interface SecondaryReadSettings {
  readonly endpoint: string | undefined;
}

const SECONDARY_SUFFIX = "-secondary";

/**
 * Validates `secondaryReads`: `true` or an options object turns it on, `false` and
 * undefined leave it off; anything else (null included) is a TypeError naming it.
 */
export function resolveSecondaryReads(option: unknown, name = "secondaryReads"): SecondaryReadSettings | undefined {
  if (option === undefined || option === false) return undefined;
  if (option === true) return { endpoint: undefined };
  if (typeof option !== "object" || option === null || Array.isArray(option)) {
    throw new TypeError(`${name} must be a boolean or an options object ({ endpoint }); got ${describeValue(option)}.`);
  }
  rejectUnknownKeys(name, option, ["endpoint"]);
  const endpoint = (option as SecondaryReadOptions).endpoint;
  return { endpoint: endpoint === undefined ? undefined : validateEndpoint(`${name}.endpoint`, endpoint) };
}

/** An http(s) account endpoint, without a trailing slash. A query is refused unread: it could hold a SAS. */
function validateEndpoint(name: string, value: unknown): string {
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

/**
 * Only reads go to the secondary: it serves nothing else, and a write there could not be
 * replicated back. By method first (cheap, at the operation's start); a Queue "Get Messages"
 * is a GET that dequeues (it changes visibility and the pop receipt), so the route also
 * refuses `receive_messages` when it opens (see {@link SecondaryRoute.open}).
 */
export function isSecondaryReadMethod(method: string): boolean {
  return method === "GET" || method === "HEAD";
}

/** Operations that are GETs but change state: never sent to the secondary. */
const NOT_READS: ReadonlySet<StorageOperation> = new Set<StorageOperation>(["receive_messages"]);

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

/**
 * One operation's way to the secondary. Made only for a GET or HEAD of a client with
 * `secondaryReads` on. Closed for the rest of the operation once the secondary answered 404:
 * the secondary lags, so its "not found" may be a write not replicated yet, and only the
 * primary may say so (as the storage SDKs do).
 */
export class SecondaryRoute {
  readonly #settings: SecondaryReadSettings;
  #url: string | undefined | null = null;
  #closed = false;
  /** The primary's failure count when the secondary was last read; -1 before. */
  #readAfterFailures = -1;

  constructor(settings: SecondaryReadSettings) {
    this.#settings = settings;
  }

  /**
   * True while a read may go to the secondary now: it has one, the operation is a read (not a
   * dequeue), the secondary has not answered 404 or a permanent failure, and it has not been
   * read since the primary last failed (`primaryFailures`, the primary's failed attempts so
   * far): one secondary read per failure at most, so an operation waiting on an open circuit
   * does not poll the secondary.
   */
  open(request: PipelineRequest, operation: StorageOperation, primaryFailures: number): boolean {
    if (this.#closed || primaryFailures === this.#readAfterFailures) return false;
    // Derived on first use: an operation that never fails never pays for it.
    if (this.#url === null) this.#url = NOT_READS.has(operation) ? undefined : secondaryUrlOf(request.url, this.#settings.endpoint);
    return this.#url !== undefined;
  }

  /**
   * Points `request` at the secondary for one attempt (call after `open()`), and returns the
   * primary's URL, which {@link restore} puts back: the operation's address (breaker scope,
   * labels) stays the primary's.
   */
  redirect(request: PipelineRequest, primaryFailures: number): string {
    this.#readAfterFailures = primaryFailures;
    const primaryUrl = request.url;
    request.url = this.#url as string;
    return primaryUrl;
  }

  /** Puts the primary's URL back on `request`, whatever the attempt did. */
  restore(request: PipelineRequest, primaryUrl: string): void {
    request.url = primaryUrl;
  }

  /**
   * Learns from the secondary's answer. A 404 may be a write not replicated yet; a permanent
   * failure (403 on a GRS account without read access, a wrong endpoint) will not change
   * within the operation: the primary alone goes on.
   */
  learn(result: AttemptResult): void {
    if (result.outcomeClass === "permanent" || result.status === 404 || (result.error as { statusCode?: unknown } | undefined)?.statusCode === 404) {
      this.#closed = true;
    }
  }
}
