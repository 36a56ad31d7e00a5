import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { PartitionScope, StorageService } from "../partition/partitionScope.js";
import type { StorageOperation } from "./storageOperation.js";

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
  /** The storage service: the install's hint when given, else read from the URL (its host, or a path only Tables uses). */
  readonly service: StorageService | undefined;
  /** The partition scope (service, account, table/container/queue, partition), or undefined. */
  readonly scope: PartitionScope | undefined;
  /** `scopeKey(scope)`, e.g. `"table|acct|orders|pk-1"`: the key circuits and pacing are kept under. */
  readonly scopeKey: string | undefined;
  /** The `operation` metric label; `"other"` when the service is unknown. */
  readonly operation: StorageOperation;
  /**
   * The keys of a Tables entity address (`/orders(PartitionKey='p',RowKey='r')`, the whole
   * account-relative path), or undefined. The ambiguous-write description and its read-back
   * need the RowKey, which the scope does not carry.
   */
  readonly entityKeys: EntityKeys | undefined;
}

/** A Tables entity's keys, as its address names them (unescaped and percent-decoded). */
export interface EntityKeys {
  /** The entity's PartitionKey (`""` is a valid key). */
  readonly partitionKey: string;
  /** The entity's RowKey. */
  readonly rowKey: string;
}

/** Reads a request's address lazily (see {@link RequestAddress}). */
export type ReadRequestAddress = (request: PipelineRequest, service?: StorageService) => RequestAddress;
