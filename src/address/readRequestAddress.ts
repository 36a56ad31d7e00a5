import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { scopeOfParsedUrl, serviceOfParsedUrl } from "../partition/extractScope.js";
import { parseAccountAndPath, type AccountAndPath } from "../partition/parseAccountAndPath.js";
import type { PartitionScope, StorageService } from "../partition/partitionScope.js";
import { parseTableSegment } from "../partition/parseTableSegment.js";
import { scopeKey } from "../partition/scopeKey.js";
import type { EntityKeys, RequestAddress } from "./requestAddress.js";
import { operationOfParsedUrl, type StorageOperation } from "./storageOperation.js";

/**
 * Reads what `request` addresses (see {@link RequestAddress}): nothing now, each field on
 * first access, the URL parsed at most once for all of them. The answers are those of the
 * pure functions: `scope` is `extractScope(request, service)`, `scopeKey` is
 * `scopeKey(scope)`, `operation` is `storageOperationName(address.service, request)`.
 * Make one per operation and pass it along: the address keeps what it read, nothing else does.
 */
export function readRequestAddress(request: PipelineRequest, service?: StorageService): RequestAddress {
  return new LazyRequestAddress(request, service);
}

/** A field not read yet (`undefined` is a valid answer for most). */
const UNREAD: unique symbol = Symbol("unread");
type Lazy<T> = T | typeof UNREAD;

class LazyRequestAddress implements RequestAddress {
  readonly request: PipelineRequest;
  readonly #hint: StorageService | undefined;
  #parsed: Lazy<AccountAndPath | undefined> = UNREAD;
  #service: Lazy<StorageService | undefined> = UNREAD;
  #scope: Lazy<PartitionScope | undefined> = UNREAD;
  #scopeKey: Lazy<string | undefined> = UNREAD;
  #operation: Lazy<StorageOperation> = UNREAD;
  #entityKeys: Lazy<EntityKeys | undefined> = UNREAD;

  constructor(request: PipelineRequest, hint: StorageService | undefined) {
    this.request = request;
    this.#hint = hint;
  }

  get service(): StorageService | undefined {
    if (this.#service === UNREAD) {
      const parsed = this.#hint === undefined ? this.#parsedUrl() : undefined;
      this.#service = this.#hint ?? (parsed === undefined ? undefined : serviceOfParsedUrl(parsed));
    }
    return this.#service;
  }

  get scope(): PartitionScope | undefined {
    if (this.#scope === UNREAD) {
      const parsed = this.#parsedUrl();
      this.#scope = parsed === undefined ? undefined : guarded(() => scopeOfParsedUrl(textRequest(this.request), parsed, this.service), undefined);
    }
    return this.#scope;
  }

  get scopeKey(): string | undefined {
    if (this.#scopeKey === UNREAD) {
      const scope = this.scope;
      this.#scopeKey = scope === undefined ? undefined : scopeKey(scope);
    }
    return this.#scopeKey;
  }

  get operation(): StorageOperation {
    if (this.#operation === UNREAD) {
      const parsed = this.#parsedUrl();
      const service = this.service;
      this.#operation =
        parsed === undefined || service === undefined ? "other" : guarded(() => operationOfParsedUrl(service, this.request, parsed), "other");
    }
    return this.#operation;
  }

  get entityKeys(): EntityKeys | undefined {
    if (this.#entityKeys === UNREAD) {
      const parsed = this.#parsedUrl();
      this.#entityKeys = parsed === undefined || this.service !== "table" ? undefined : entityKeysOf(parsed);
    }
    return this.#entityKeys;
  }

  /** The one URL parse every field shares. */
  #parsedUrl(): AccountAndPath | undefined {
    if (this.#parsed === UNREAD) {
      const url = guarded(() => this.request.url, undefined);
      this.#parsed = typeof url === "string" ? parseAccountAndPath(url) : undefined;
    }
    return this.#parsed;
  }
}

/** Reads sit in every request's path: a bug (or a hostile request object) costs the answer, not the request. */
function guarded<T>(read: () => T, fallback: T): T {
  try {
    return read();
  } catch {
    return fallback;
  }
}

/** The request as scope extraction reads it: the body only when it is text (Tables inserts and `$batch`). */
function textRequest(request: PipelineRequest): { method: string; url: string; body?: string } {
  const body = typeof request.body === "string" ? request.body : undefined;
  return { method: request.method, url: request.url, body };
}

/** The keys of an account-relative path that is exactly one entity address. */
function entityKeysOf(parsed: AccountAndPath): EntityKeys | undefined {
  if (parsed.pathSegments.length !== 1) return undefined;
  const segment = parseTableSegment(parsed.pathSegments[0] as string);
  if (segment === undefined || segment.name === "" || segment.name === "Tables" || segment.name === "$batch") return undefined;
  const partitionKey = segment.keys.get("PartitionKey");
  const rowKey = segment.keys.get("RowKey");
  return partitionKey === undefined || rowKey === undefined ? undefined : { partitionKey, rowKey };
}
