import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { StorageOperation } from "../metrics/storageOperation.js";
import type { PartitionScope, StorageService } from "../partition/partitionScope.js";

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
