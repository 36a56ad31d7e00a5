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
  method: string;
  /** The absolute request URL. */
  url: string;
  /** The request body as text, when it is text (Tables inserts and `$batch`). */
  body?: string;
}

const SEPARATOR = "|";

/**
 * A stable string key for a scope, e.g. `"table|acct|orders|pk-1"`, for use in maps.
 * Unambiguous: `\` and `|` inside fields are backslash-escaped, and a scope without a
 * partition has three fields while an empty PartitionKey (`""`, valid in Tables) has four.
 */
export function scopeKey(scope: PartitionScope): string {
  const fields = [scope.service, scope.account, scope.resource];
  if (scope.partition !== undefined) fields.push(scope.partition);
  return fields.map(escapeField).join(SEPARATOR);
}

function escapeField(field: string): string {
  // Most fields hold neither character: skip the regex and its closure (every request's hot path).
  if (!field.includes("|") && !field.includes("\\")) return field;
  return field.replace(/[\\|]/g, (c) => `\\${c}`);
}
