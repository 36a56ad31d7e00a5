import { detectServiceFromUrl, stripSecondary } from "./detectServiceFromUrl.js";
import { extractScope } from "./extractScope.js";
import { parseAccountAndPathWithUrl, plainOriginEnd } from "./parseAccountAndPath.js";
import { partitionKeyFromFilter } from "./partitionKeyFromFilter.js";
import { undecodedPathEnd } from "./plainPath.js";
import type { StorageService } from "./partitionScope.js";
import { scopeKey } from "./scopeKey.js";
import { upperCaseMethod } from "./upperCaseMethod.js";
import { queryParameter } from "./tableScope.js";

/** The parts of a request its scope key is read from; `body` counts only when it is a string. */
export interface ScopeKeyRequest {
  /** The HTTP method, e.g. `"GET"`. */
  method: string;
  /** The absolute request URL. */
  url: string;
  /** The request body; read (Tables inserts and `$batch`) only when it is text. */
  body?: unknown;
}

/** A request's scope as a breaker keys it. */
export interface ScopeKeyAndService {
  /** `scopeKey` of the request's partition scope, e.g. `"table|acct|orders|pk-1"`. */
  key: string;
  /** The scope's service. */
  service: StorageService;
}

/**
 * `scopeKey(extractScope(request, service))` with the scope's service, or undefined when
 * `extractScope` gives undefined: always the same answer, but common requests are read
 * straight from the URL text. A plain URL (an origin seen before, a path with no `%` and
 * nothing the URL parser would rewrite) that is a Tables entity address, table or query,
 * a blob or a queue builds its key without the URL parser, a Map or an array (a query's
 * `$filter` is read by tableScope's own helpers). So does an entity address as the SDK
 * writes it, percent-escaped and doubled quotes included. Anything else (other escapes,
 * `$batch`, `Tables`, insert bodies) goes the slow way. Never throws.
 */
export function requestScopeKey(request: ScopeKeyRequest, service?: StorageService): ScopeKeyAndService | undefined {
  try {
    const fast = fastScopeKey(request, service);
    if (fast !== SLOW) return fast;
  } catch {
    // Fall through: the slow way answers for anything the fast one cannot.
  }
  return slowScopeKey(request, service);
}

/** The fast path's "ask the slow path" answer. */
const SLOW = null;

function slowScopeKey(request: ScopeKeyRequest, service: StorageService | undefined): ScopeKeyAndService | undefined {
  try {
    const body = typeof request.body === "string" ? request.body : undefined;
    const scope = extractScope({ method: request.method, url: request.url, body }, service);
    return scope === undefined ? undefined : { key: scopeKey(scope), service: scope.service };
  } catch {
    return undefined;
  }
}

const QUESTION = 0x3f;
const HASH = 0x23;
const QUOTE = 0x27;
const CLOSE = 0x29;
const COMMA = 0x2c;
const DOLLAR = 0x24;

function fastScopeKey(request: ScopeKeyRequest, hint: StorageService | undefined): ScopeKeyAndService | undefined | typeof SLOW {
  if (typeof request !== "object" || request === null) return SLOW;
  const url = request.url;
  if (typeof url !== "string") return SLOW;

  // The commonest request first: an entity address on the origin of the previous one.
  const last = lastOrigin;
  if (last !== undefined && mayBeTable(hint, last)) {
    const key = entityKey(url, last);
    if (key !== undefined) return key;
  }
  const origin = plainOrigin(url);
  if (origin === undefined) return SLOW;
  if (origin !== last && mayBeTable(hint, origin)) {
    const key = entityKey(url, origin);
    if (key !== undefined) return key;
  }

  const pathStart = origin.text.length;
  const pathEnd = undecodedPathEnd(url, pathStart);
  if (pathEnd === -1) return SLOW;

  // The account, and where the first account-relative segment starts (no segments and
  // one empty segment read the same everywhere below).
  let account: string;
  let first: number;
  if (origin.pathStyle) {
    if (pathEnd === pathStart) return undefined; // no path: no account
    const accountEnd = segmentEnd(url, pathStart + 1, pathEnd);
    if (accountEnd === pathStart + 1) return undefined;
    account = stripSecondary(url.slice(pathStart + 1, accountEnd));
    first = accountEnd < pathEnd ? accountEnd + 1 : pathEnd;
  } else {
    account = origin.account;
    first = pathEnd > pathStart ? pathStart + 1 : pathEnd;
  }
  const firstEnd = segmentEnd(url, first, pathEnd);

  const service = hint ?? origin.service ?? tableByShape(url, first, firstEnd);
  switch (service) {
    case "table":
      return tableKey(request, url, account, first, firstEnd, pathEnd);
    case "blob": {
      if (firstEnd === first) return { key: flatKey(service, account, ""), service };
      const container = url.slice(first, firstEnd);
      // The blob name is the rest of the path, slashes and all.
      if (firstEnd + 1 >= pathEnd) return { key: flatKey(service, account, container), service };
      return { key: flatKey(service, account, container, url.slice(firstEnd + 1, pathEnd)), service };
    }
    case "queue":
      return { key: flatKey(service, account, url.slice(first, firstEnd)), service };
    case SLOW:
      return SLOW;
    default:
      return undefined;
  }
}

/**
 * scopeKey's format for fields that hold no `|` or `\`, as one flat string. (A template
 * literal would make a rope whose longer pieces are views into the request URL, which a
 * key the breaker keeps would keep alive: several times the key's own size.)
 */
function flatKey(service: StorageService, account: string, resource: string, partition?: string): string {
  return partition === undefined ? [service, account, resource].join("|") : [service, account, resource, partition].join("|");
}

/** V8 copies a slice shorter than this; a longer one is a view into the string it came from. */
const SHORTEST_VIEW = 13;

/** Whether a request to this origin with this hint may be read as Tables (by hint, host or shape). */
function mayBeTable(hint: StorageService | undefined, origin: Origin): boolean {
  return hint === "table" || (hint === undefined && origin.service !== "blob" && origin.service !== "queue");
}

/**
 * The key of a Tables entity address written as the SDK writes it, the whole path being
 * `[/<account>]/<table>(PartitionKey='..',RowKey='..')` on the given origin; undefined for
 * anything else, which the general reading below takes. The origin's own regular
 * expression checks origin, characters and shape in one pass, which costs less than
 * comparing the origin, scanning the path and parsing it one after the other. Doubled
 * quotes are undoubled; percent-escapes in the keys (the SDK escapes all but letters,
 * digits and `-_.!~*'()`) are decoded, unless they would change what extractScope reads:
 * an escaped quote, a malformed escape (the segment then stays undecoded), or a decoded
 * `|` or `\` (escaped in keys) send the request the slow way.
 */
function entityKey(url: string, origin: Origin): ScopeKeyAndService | undefined | typeof SLOW {
  const shape = origin.entityAddress;
  shape.lastIndex = 0;
  if (!shape.test(url)) return undefined;
  const open = url.indexOf("(", origin.text.length);
  const prefix = entityPrefix(url, origin, open);
  if (prefix === undefined) return undefined; // `Tables(...)` is no entity
  const partitionStart = open + "(PartitionKey='".length;
  const partitionEnd = literalEnd(url, partitionStart);
  let partition: string | undefined = url.slice(partitionStart, partitionEnd);
  const percent = url.indexOf("%", partitionStart);
  if (percent !== -1 && percent < shape.lastIndex) {
    const rowKeyStart = partitionEnd + "',RowKey='".length;
    partition = decodeKeyLiteral(partition);
    if (partition === undefined || decodeKeyLiteral(url.slice(rowKeyStart, literalEnd(url, rowKeyStart))) === undefined) return SLOW;
    if (partition.includes("|") || partition.includes("\\")) return SLOW;
  }
  if (partition.includes("''")) partition = partition.replace(/''/g, "'");
  return { key: partition.length < SHORTEST_VIEW ? prefix + partition : [prefix, partition].join(""), service: "table" };
}

/**
 * `table|<account>|<table>|` for the entity address on `origin` whose path runs to `open`
 * (its `(`), remembered for the last table the origin saw; undefined for `Tables`.
 */
function entityPrefix(url: string, origin: Origin, open: number): string | undefined {
  const pathStart = origin.text.length;
  const path = url.slice(pathStart, open);
  if (path === origin.entityPath) return origin.entityPrefix;
  let account = origin.account;
  let first = pathStart + 1;
  if (origin.pathStyle) {
    const accountEnd = url.indexOf("/", first);
    account = stripSecondary(url.slice(first, accountEnd));
    first = accountEnd + 1;
  }
  const table = url.slice(first, open);
  if (table === "Tables") return undefined;
  origin.entityPath = path;
  origin.entityPrefix = flatKey("table", account, table, "");
  return origin.entityPrefix;
}

/** Where the OData string literal whose text starts at `from` ends: its first quote that is not doubled. */
function literalEnd(url: string, from: number): number {
  let quote = url.indexOf("'", from);
  while (url.charCodeAt(quote + 1) === QUOTE) quote = url.indexOf("'", quote + 2);
  return quote;
}

/**
 * A key literal's text percent-decoded (its quotes still doubled), or undefined when an
 * escape is malformed or spells a quote (which would change where literals end).
 */
function decodeKeyLiteral(text: string): string | undefined {
  if (!text.includes("%")) return text;
  if (text.includes("%27")) return undefined;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/**
 * `/<table>(PartitionKey='..',RowKey='..')` up to `?`, `#` or the end, as regular
 * expression source: a table name of letters and digits, literals of plain path
 * characters (see {@link NOT_PLAIN}) other than `'` and `/`, doubled quotes and
 * percent-escapes. No segment can be a dot segment, and no field needs escaping in a
 * key (once decoded, see {@link entityKey}).
 */
const ENTITY_ADDRESS_SOURCE = (() => {
  const literal = String.raw`'(?:[!$&(-.0-;=@-[\]_a-z~]|%[0-9A-Fa-f]{2}|'')*'`;
  return String.raw`\/[A-Za-z][A-Za-z0-9]*\(PartitionKey=${literal},RowKey=${literal}\)(?=[?#]|$)`;
})();

/** An account segment of a path-style URL, as regular expression source: letters, digits and `-`. */
const ACCOUNT_SEGMENT_SOURCE = String.raw`\/[A-Za-z0-9-]+`;

/** extractScope's Tables-only shapes on a hintless path-style URL; `$batch` is left to the slow path. */
function tableByShape(url: string, first: number, firstEnd: number): StorageService | undefined | typeof SLOW {
  if (firstEnd - first === 6 && url.startsWith("$batch", first)) return SLOW;
  if (url.startsWith("Tables", first) && firstEnd - first >= 6) return "table";
  const open = url.indexOf("(", first);
  return open !== -1 && open < firstEnd ? "table" : undefined;
}

/**
 * The key of a Tables request whose first segment is `[first, firstEnd)`, as tableScope
 * reads it: an entity address pins its PartitionKey; a query pins the one its `$filter`
 * does, if any; an insert without a body is table-wide. Segments that need
 * parseTableSegment's whole grammar (a `$` name, `Tables`, a positional or doubled-quote
 * literal) and inserts with a body go slow.
 */
function tableKey(
  request: ScopeKeyRequest,
  url: string,
  account: string,
  first: number,
  firstEnd: number,
  pathEnd: number,
): ScopeKeyAndService | typeof SLOW {
  if (firstEnd === first) return accountWide(account);
  if (url.charCodeAt(first) === DOLLAR) return SLOW; // `$batch`, `$batch(...)`: the body decides
  let open = url.indexOf("(", first);
  if (open >= firstEnd) open = -1;
  const nameEnd = open === -1 ? firstEnd : open;
  if (nameEnd - first === 6 && url.startsWith("Tables", first)) return SLOW;

  let partitionStart = -1;
  let partitionEnd = -1;
  if (open !== -1) {
    // parseTableSegment's loop, on the URL text (no spaces can occur in a plain path).
    let index = open + 1;
    if (url.charCodeAt(index) === QUOTE) return SLOW; // `t('x')`
    while (index < firstEnd && url.charCodeAt(index) !== CLOSE) {
      const equals = url.indexOf("=", index);
      if (equals === -1 || equals >= firstEnd || equals === index) return accountWide(account);
      const literal = equals + 1;
      if (literal >= firstEnd || url.charCodeAt(literal) !== QUOTE) return accountWide(account);
      const quote = url.indexOf("'", literal + 1);
      if (quote === -1 || quote >= firstEnd) return accountWide(account);
      if (url.charCodeAt(quote + 1) === QUOTE) return SLOW; // `''` inside a literal
      if (equals - index === 12 && url.startsWith("PartitionKey", index)) {
        partitionStart = literal + 1;
        partitionEnd = quote;
      }
      index = quote + 1;
      const next = index < firstEnd ? url.charCodeAt(index) : -1;
      if (next === COMMA) index++;
      else if (next !== CLOSE) return accountWide(account);
    }
    if (index >= firstEnd) return accountWide(account);
  }

  const table = url.slice(first, nameEnd);
  if (partitionStart !== -1) {
    return { key: flatKey("table", account, table, url.slice(partitionStart, partitionEnd)), service: "table" };
  }
  const method = typeof request.method === "string" ? upperCaseMethod(request.method) : "";
  if (open !== -1 || method === "GET") {
    if (!queryMayFilter(url, pathEnd)) return { key: flatKey("table", account, table), service: "table" };
    // tableScope's own reading of the filter, on the query as extractScope cuts it.
    const hash = url.indexOf("#", pathEnd);
    const filter = queryParameter(url.slice(pathEnd, hash === -1 ? url.length : hash), "$filter");
    const partition = filter === undefined ? undefined : partitionKeyFromFilter(filter);
    return { key: scopeKey({ service: "table", account, resource: table, partition }), service: "table" };
  }
  if (method === "POST" && typeof request.body === "string" && request.body !== "") return SLOW;
  return { key: flatKey("table", account, table), service: "table" };
}

function accountWide(account: string): ScopeKeyAndService {
  return { key: flatKey("table", account, ""), service: "table" };
}

/** Whether the query (from `?` at pathEnd to `#`) might hold a `$filter`, escaped or not: if not, no need to split it. */
function queryMayFilter(url: string, pathEnd: number): boolean {
  if (url.charCodeAt(pathEnd) !== QUESTION) return false;
  FILTER_OR_ESCAPE.lastIndex = pathEnd;
  return FILTER_OR_ESCAPE.test(url) && url.charCodeAt(FILTER_OR_ESCAPE.lastIndex - 1) !== HASH;
}

/** A `$filter`, a `%` (which could spell one), or the `#` that ends the query. */
const FILTER_OR_ESCAPE = /[%#]|\$filter/g;

/** Where the segment starting at `from` ends: the next `/` before `pathEnd`, else `pathEnd`. */
function segmentEnd(url: string, from: number, pathEnd: number): number {
  const slash = url.indexOf("/", from);
  return slash === -1 || slash >= pathEnd ? pathEnd : slash;
}

/** What an origin (`http://host[:port]`, written plainly) says, learned once through the slow path's own parsers. */
interface Origin {
  /** The origin as written, e.g. `http://127.0.0.1:10002`. */
  text: string;
  /** True when the account is the first path segment (Azurite, emulators). */
  pathStyle: boolean;
  /** The account of a host-style origin; "" for a path-style one. */
  account: string;
  /** The service the hostname names, if it names one. */
  service: StorageService | undefined;
  /** Sticky: the origin at the start of a URL, followed by `/`, `?`, `#` or the end. */
  prefix: RegExp;
  /** Sticky: a whole URL on this origin that is an entity address (see {@link entityKey}). */
  entityAddress: RegExp;
  /** The path up to `(` of the last entity address read on this origin, e.g. `/devstoreaccount1/orders`. */
  entityPath: string;
  /** Its key prefix, e.g. `table|devstoreaccount1|orders|`. */
  entityPrefix: string;
}

/** Origins seen; a client talks to one or two, so a small bound only matters for hostile input. */
const MAX_CACHED_ORIGINS = 64;
const origins = new Map<string, Origin>();
/**
 * The origin of the previous plain URL, checked before any slicing and Map lookup. (With
 * its own regular expression: `startsWith` with a string known only at run time costs
 * V8 more.)
 */
let lastOrigin: Origin | undefined;

/** The URL's origin when it is written plainly and could be learned; undefined otherwise. */
function plainOrigin(url: string): Origin | undefined {
  const last = lastOrigin;
  if (last !== undefined) {
    last.prefix.lastIndex = 0;
    if (last.prefix.test(url)) return last;
  }
  const end = plainOriginEnd(url);
  if (end === -1) return undefined;
  const text = url.slice(0, end);
  let origin = origins.get(text);
  if (origin === undefined) {
    origin = learnOrigin(text);
    if (origin === undefined) return undefined;
    if (origins.size >= MAX_CACHED_ORIGINS) origins.delete(origins.keys().next().value as string);
    origins.set(text, origin);
  }
  lastOrigin = origin;
  return origin;
}

/**
 * Asks the slow path's parsers about an origin once: `<origin>/x` keeps `x` as a segment
 * on a host-style origin and takes it as the account on a path-style one. Undefined
 * when the URL parser refuses the origin or its account would need escaping in a key.
 */
function learnOrigin(text: string): Origin | undefined {
  const probe = parseAccountAndPathWithUrl(`${text}/x`);
  if (probe === undefined) return undefined;
  const pathStyle = probe.pathSegments.length === 0;
  const account = pathStyle ? "" : probe.account;
  if (account.includes("|") || account.includes("\\")) return undefined;
  const literal = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return {
    text,
    pathStyle,
    account,
    service: detectServiceFromUrl(`${text}/`),
    prefix: new RegExp(`${literal}(?![^/?#])`, "y"),
    entityAddress: new RegExp(`${literal}${pathStyle ? ACCOUNT_SEGMENT_SOURCE : ""}${ENTITY_ADDRESS_SOURCE}`, "y"),
    entityPath: "",
    entityPrefix: "",
  };
}
