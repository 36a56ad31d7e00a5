import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { scopeOfParsedUrl, serviceOfParsedUrl } from "./extractScope.js";
import { parseAccountAndPath, type AccountAndPath } from "./parseAccountAndPath.js";
import { scopeKey, type PartitionScope, type StorageService } from "./partitionScope.js";
import { isWriteMethod } from "./requestMethod.js";
import { secondaryUrlOf } from "./secondaryUrl.js";
import { operationOfParsedUrl, type StorageOperation } from "./storageOperation.js";
import type { EntityOperationNames } from "./entityOperationNames.js";
import { tableWriteOfParsedUrl, type TableWrite } from "./tableWrite.js";

/**
 * What one request addresses in Azure Storage, read once per operation and asked by
 * everything that needs it: the partition gate (scope key), the metric labels (service,
 * account, resource, operation), the ambiguous-write description, the secondary read's
 * URL and the logs. Nothing else in the package reads a request's URL. Every field is
 * computed on first use and kept (a success that nobody asks about costs no parse). Never
 * throws: what cannot be read is `undefined`.
 */
export interface RequestAddress {
  /** The request this address was read from. */
  readonly request: PipelineRequest;
  /** The storage service: the install's hint when given, else read from the URL (its host, or a path only Tables uses). */
  readonly service: StorageService | undefined;
  /** The storage account (`myacct`, `devstoreaccount1`), without a `-secondary` suffix; undefined when the URL names none. */
  readonly account: string | undefined;
  /** The partition scope (service, account, table/container/queue, partition), or undefined. */
  readonly scope: PartitionScope | undefined;
  /** `scopeKey(scope)`, e.g. `"table|acct|orders|pk-1"`: the key circuits and pacing are kept under. */
  readonly scopeKey: string | undefined;
  /** The `operation` metric label; `"other"` when the service is unknown. */
  readonly operation: StorageOperation;
  /** What a Tables entity write does, keys included (`tableWriteOfParsedUrl` of the request and its body text), or undefined for anything else. */
  readonly tableWrite: TableWrite | undefined;
  /**
   * The URL to send this request to on the secondary region (RA-GRS / RA-GZRS): the same
   * path and query (a SAS stays as signed) under `endpoint` when given, else under the
   * account with `-secondary` appended. Undefined when no secondary can be derived (a
   * custom domain, Cosmos DB, a URL already on the secondary).
   */
  secondaryUrl(endpoint: string | undefined): string | undefined;
  /** This address as read under `service`: itself when it was (or `service` is undefined), else its request read again under it. */
  under(service: StorageService | undefined): RequestAddress;
}

/**
 * Reads what `request` addresses (see {@link RequestAddress}), each field on first access, from
 * one parse of the URL: `scope` is `extractScope(request, service)`, `operation` is
 * `storageOperationName(address.service, request)`, `tableWrite` is `tableWriteOfParsedUrl(...)`.
 * `names`: what an install has learnt about naming its client's entity addresses (Tables only),
 * asked before the URL is read for `operation` and taught what is then read.
 */
export function readRequestAddress(request: PipelineRequest, service?: StorageService, names?: EntityOperationNames): RequestAddress {
  return new LazyRequestAddress(request, service, service === "table" ? names : undefined);
}

/** A field not read yet (`undefined` is a valid answer for most). */
const UNREAD: unique symbol = Symbol("unread");
type Lazy<T> = T | typeof UNREAD;

class LazyRequestAddress implements RequestAddress {
  // Private, behind a getter: an address in a logged or serialized event must not carry the
  // request's URL (a SAS) and headers (Authorization) along.
  readonly #request: PipelineRequest;
  readonly #hint: StorageService | undefined;
  readonly #names: EntityOperationNames | undefined;
  #url: Lazy<string | undefined> = UNREAD;
  #parsed: Lazy<AccountAndPath | undefined> = UNREAD;
  #service: Lazy<StorageService | undefined> = UNREAD;
  #scope: Lazy<PartitionScope | undefined> = UNREAD;
  #scopeKey: Lazy<string | undefined> = UNREAD;
  #operation: Lazy<StorageOperation> = UNREAD;
  #tableWrite: Lazy<TableWrite | undefined> = UNREAD;

  constructor(request: PipelineRequest, hint: StorageService | undefined, names: EntityOperationNames | undefined) {
    this.#request = request;
    this.#hint = hint;
    this.#names = names;
  }

  get request(): PipelineRequest {
    return this.#request;
  }

  get service(): StorageService | undefined {
    if (this.#service === UNREAD) {
      const parsed = this.#hint === undefined ? this.#parsedUrl() : undefined;
      this.#service = this.#hint ?? (parsed === undefined ? undefined : serviceOfParsedUrl(parsed));
    }
    return this.#service;
  }

  get account(): string | undefined {
    return this.#parsedUrl()?.account;
  }

  get scope(): PartitionScope | undefined {
    if (this.#scope === UNREAD) {
      const parsed = this.#parsedUrl();
      this.#scope = parsed === undefined ? undefined : guarded(() => scopeOfParsedUrl(this.request, parsed, this.service), undefined);
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
    if (this.#operation === UNREAD) this.#operation = this.#names === undefined ? this.#nameInFull() : this.#nameWith(this.#names);
    return this.#operation;
  }

  /** The operation `names` remembers for this request's method and URL; else read in full, and taught to `names`. */
  #nameWith(names: EntityOperationNames): StorageOperation {
    const url = this.#urlText();
    const method = guarded(() => this.request.method, undefined);
    if (typeof url !== "string" || typeof method !== "string") return this.#nameInFull();
    const recalled = names.recall(method, url);
    if (recalled !== undefined) return recalled;
    const operation = this.#nameInFull();
    names.learn(method, url, operation);
    return operation;
  }

  /** The operation read from the parsed URL (the one parse every field shares). */
  #nameInFull(): StorageOperation {
    const parsed = this.#parsedUrl();
    const service = this.service;
    return parsed === undefined || service === undefined ? "other" : guarded(() => operationOfParsedUrl(service, this.request, parsed), "other");
  }

  get tableWrite(): TableWrite | undefined {
    if (this.#tableWrite === UNREAD) {
      // A read is never a write: its body is not decoded, its URL not parsed for this.
      const parsed = isWriteMethod(this.request.method) ? this.#parsedUrl() : undefined;
      this.#tableWrite = parsed === undefined ? undefined : guarded(() => tableWriteOfParsedUrl(this.request, parsed, bodyText(this.request)), undefined);
    }
    return this.#tableWrite;
  }

  under(service: StorageService | undefined): RequestAddress {
    return service === undefined || this.service === service ? this : readRequestAddress(this.request, service);
  }

  secondaryUrl(endpoint: string | undefined): string | undefined {
    const url = this.#urlText();
    return url === undefined ? undefined : guarded(() => secondaryUrlOf(url, endpoint), undefined);
  }

  /** The one URL parse every field shares. */
  #parsedUrl(): AccountAndPath | undefined {
    if (this.#parsed === UNREAD) this.#parsed = parseAccountAndPath(this.#urlText() as string);
    return this.#parsed;
  }

  /** The request's URL, read once: every answer comes from the same text. */
  #urlText(): string | undefined {
    if (this.#url === UNREAD) this.#url = guarded(() => this.request.url, undefined);
    return this.#url;
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

/** The request body as text, when it is text (the SDK sends Tables JSON as a string). */
export function bodyText(request: PipelineRequest): string | undefined {
  const body = request.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  return undefined;
}
