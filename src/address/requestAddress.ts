import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { storageOperationName, type StorageOperation } from "../metrics/storageOperation.js";
import { detectServiceFromUrl } from "../partition/detectServiceFromUrl.js";
import { extractScope } from "../partition/extractScope.js";
import type { PartitionScope, StorageService } from "../partition/partitionScope.js";
import { scopeKey } from "../partition/scopeKey.js";

/**
 * What one request addresses in Azure Storage, read once per operation and asked by
 * everything that needs it: the partition gate (scope key), the metric labels (service,
 * account, resource, operation), the ambiguous-write description and the logs. Every
 * field is computed on first use and kept (a success that nobody asks about costs no
 * parse). Never throws: what cannot be read is `undefined`.
 */
export interface RequestAddress {
  /** The request this address was read from. */
  readonly request: PipelineRequest;
  /** The storage service: the install's hint when given, else read from the URL. */
  readonly service: StorageService | undefined;
  /** The partition scope (service, account, table/container/queue, partition), or undefined. */
  readonly scope: PartitionScope | undefined;
  /** `scopeKey(scope)`, e.g. `"table|acct|orders|pk-1"`: the key circuits and pacing are kept under. */
  readonly scopeKey: string | undefined;
  /** The `operation` metric label. */
  readonly operation: StorageOperation;
}

/** Reads a request's address lazily (see {@link RequestAddress}). */
export type ReadRequestAddress = (request: PipelineRequest, service?: StorageService) => RequestAddress;

/**
 * Reads a request's address lazily: each field is computed on first use and kept on the
 * object. The loop makes one per operation and hands it to the gate, the observers and
 * the write description.
 */
export function readRequestAddress(request: PipelineRequest, service?: StorageService): RequestAddress {
  return new LazyRequestAddress(request, service);
}

class LazyRequestAddress implements RequestAddress {
  readonly request: PipelineRequest;
  readonly #serviceHint: StorageService | undefined;
  #service: StorageService | undefined | null = null;
  #scope: PartitionScope | undefined | null = null;
  #scopeKey: string | undefined | null = null;
  #operation: StorageOperation | undefined;

  constructor(request: PipelineRequest, service: StorageService | undefined) {
    this.request = request;
    this.#serviceHint = service;
  }

  get service(): StorageService | undefined {
    if (this.#service === null) this.#service = this.#serviceHint ?? this.scope?.service ?? detectServiceFromUrl(this.request.url);
    return this.#service;
  }

  get scope(): PartitionScope | undefined {
    if (this.#scope === null) {
      const { method, url, body } = this.request;
      this.#scope = extractScope({ method, url, body: typeof body === "string" ? body : undefined }, this.#serviceHint);
    }
    return this.#scope;
  }

  get scopeKey(): string | undefined {
    if (this.#scopeKey === null) this.#scopeKey = this.scope === undefined ? undefined : scopeKey(this.scope);
    return this.#scopeKey;
  }

  get operation(): StorageOperation {
    if (this.#operation === undefined) {
      const service = this.service;
      this.#operation = service === undefined ? "other" : storageOperationName(service, this.request);
    }
    return this.#operation;
  }
}
