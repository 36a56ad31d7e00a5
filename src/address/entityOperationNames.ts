import { upperCaseMethod } from "./requestMethod.js";
import type { StorageOperation } from "./storageOperation.js";

/** Methods remembered per prefix, at most: the SDK sends five on an entity address. */
export const MAX_REMEMBERED_METHODS = 8;

/**
 * What an install has learnt about naming its Tables client's entity addresses. Reading a URL
 * and naming its operation cost about 5 % of a `getEntity` on a mock transport, half of what the
 * speed guard allows the whole package (docs/benchmarks.md, "Why the code is as it is"), and a
 * TableClient addresses one table, so that its point reads and deletes differ only in their
 * keys: `http://host/acct/orders(PartitionKey='p',RowKey='r')`.
 * Kept: the text before the keys of the last entity address named in full (`http://host/acct/orders`,
 * one per install) and the operation of each method there, at most {@link MAX_REMEMBERED_METHODS}.
 *
 * A URL that is that text followed by keys alone gets the remembered name, which naming it in
 * full would give too (`storageOperationName`, under the Tables service):
 * - the text before the keys is an http(s) origin and a path of characters every URL reader
 *   leaves as they are, without `%` escapes or `(`: both URLs are read the same way up to the keys;
 * - the keys are `(`, at least one character a reader leaves as it is (no `/`, `?`, `#`, `\`,
 *   space), `)`: the URL ends in the same path segment, with no query, and that segment keeps
 *   its first `(` where the text before the keys ends and ends in `)`, with something between;
 * - Tables names such a segment by the method alone, except PUT, PATCH and MERGE, which read
 *   the If-Match header: those are not remembered.
 */
export class EntityOperationNames {
  /** The text before the keys, `""` until an entity address is named. */
  #prefix = "";
  readonly #byMethod = new Map<string, StorageOperation>();

  /** Methods remembered (for tests: it never exceeds {@link MAX_REMEMBERED_METHODS}). */
  get size(): number {
    return this.#byMethod.size;
  }

  /** The operation of `method` on `url`, if `url` is the remembered text followed by keys alone and `method` was named there. */
  recall(method: string, url: string): StorageOperation | undefined {
    const prefix = this.#prefix;
    if (prefix === "" || !url.startsWith(prefix) || !isKeysOnly(url, prefix.length)) return undefined;
    return this.#byMethod.get(method);
  }

  /** Remembers `operation`, just named in full for `method` on `url`, when `url` is an entity address and the name reads no header. */
  learn(method: string, url: string, operation: StorageOperation): void {
    if (typeof method !== "string" || typeof url !== "string" || readsHeader(method)) return;
    const open = url.indexOf("(");
    if (open === -1 || !isKeysOnly(url, open)) return;
    if (!url.startsWith(this.#prefix) || open !== this.#prefix.length) {
      const prefix = url.slice(0, open);
      if (!PLAIN_PREFIX.test(prefix)) return;
      // Another table: what was learnt of the last one goes (the set stays one prefix's).
      this.#prefix = prefix;
      this.#byMethod.clear();
    }
    if (this.#byMethod.size < MAX_REMEMBERED_METHODS) this.#byMethod.set(method, operation);
  }
}

/** An update's name depends on its If-Match header, not on its URL alone. */
function readsHeader(method: string): boolean {
  const m = upperCaseMethod(method);
  return m === "PUT" || m === "PATCH" || m === "MERGE";
}

/**
 * An http(s) origin and a path of characters that the package's URL reader and the WHATWG parser
 * both take as they are (unreserved, sub-delimiters but parentheses, `:`, `@`), without escapes.
 */
const PLAIN_PREFIX = /^https?:\/\/[\w\-.~!$&'*+,;=:@]+\/[\w\-.~!$&'*+,;=:@/]*$/i;

const OPEN = 40;
const CLOSE = 41;
/** Characters a path segment may hold as they are: unreserved, sub-delimiters, `:`, `@` and `%` (escapes, decoded later). */
const KEY_CHARACTERS = new Uint8Array(128);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@%") KEY_CHARACTERS[c.charCodeAt(0)] = 1;

/**
 * Whether `url` from `open` to its end is `(`, at least one key character, `)`. A loop rather than
 * a pattern: this runs on every point read, and a regular expression over the keys measured no
 * cheaper (docs/benchmarks.md).
 */
function isKeysOnly(url: string, open: number): boolean {
  const close = url.length - 1;
  if (close - open < 2 || url.charCodeAt(open) !== OPEN || url.charCodeAt(close) !== CLOSE) return false;
  for (let i = open + 1; i < close; i++) {
    const c = url.charCodeAt(i);
    if (c > 127 || KEY_CHARACTERS[c] === 0) return false;
  }
  return true;
}
