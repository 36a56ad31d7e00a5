import type { StorageService } from "../partition/partitionScope.js";
import { safeDecodeURIComponent } from "../partition/safeDecodeURIComponent.js";
import { parseAccountAndPath } from "../partition/parseAccountAndPath.js";
import { operationFromParts, searchOf, storageOperationName, type OperationRequest, type StorageOperation } from "./storageOperation.js";

/**
 * {@link storageOperationName} with a fast path for one client's requests: it remembers the
 * URL prefix up to the account-relative path (`http://127.0.0.1:10002/devstoreaccount1/`,
 * `https://acct.table.core.windows.net/`), so a request under it is named without a URL
 * parse (about 300 ns saved per operation). Any other URL takes the full, pure path; the
 * answers are the same either way (a unit test holds the two to it).
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
    if (base !== undefined && url.startsWith(base) && isPlainPath(url, base.length)) {
      return operationFromParts(this.#service, {
        method: request.method.toUpperCase(),
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

/** No dot segments (plain or `%2e`) or backslashes, which a URL parser would rewrite. Native searches: this runs per operation. */
function isPlainPath(url: string, from: number): boolean {
  return (
    url.indexOf("/.", from - 1) === -1 &&
    url.indexOf("\\", from) === -1 &&
    url.indexOf("%2e", from) === -1 &&
    url.indexOf("%2E", from) === -1
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
