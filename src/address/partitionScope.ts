/** The Azure Storage services whose requests can be scoped to a partition. */
export type StorageService = "table" | "blob" | "queue";

/** Every {@link StorageService}, in a stable order (for validation and iteration). */
export const STORAGE_SERVICES: readonly StorageService[] = ["table", "blob", "queue"];

/**
 * The unit of storage a request touches, as Azure partitions it: account + table +
 * PartitionKey for Tables, account + container + blob name for Blob, account + queue
 * for Queue. A breaker or a simulator keyed by it sees one partition's rebalancing
 * without blaming its neighbours.
 */
export interface PartitionScope {
  /** The storage service the request went to. */
  service: StorageService;
  /**
   * The storage account name: `"myacct"` from `myacct.table.core.windows.net`,
   * `"devstoreaccount1"` from an Azurite path-style URL.
   */
  account: string;
  /** The table, container or queue name; `""` for account-level operations. */
  resource: string;
  /**
   * Tables: the PartitionKey, unescaped and percent-decoded (`""` is a valid key).
   * Blob: the blob name. Absent when the request is resource- or account-wide.
   */
  partition?: string;
}

/** The parts of an HTTP request that scope extraction reads. */
export interface ScopeRequest {
  /** The HTTP method, e.g. `"GET"`. */
  method: string;
  /** The absolute request URL. */
  url: string;
  /** The request body as text, when it is text (Tables inserts and `$batch`). */
  body?: string;
}
