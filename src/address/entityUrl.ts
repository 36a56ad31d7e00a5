import type { TableWrite } from "./tableWrite.js";

/**
 * The entity's URL: the write's own for updates and deletes; for an insert, the table's URL
 * with the entity address appended (keys quoted and encoded the way @azure/data-tables
 * does). The query (a SAS in the client's URL, if any) is kept as it was before signing.
 */
export function entityUrl(writeUrl: string, write: TableWrite): string {
  if (write.kind !== "insert") return writeUrl;
  const url = new URL(writeUrl);
  const key = (value: string): string => encodeURIComponent(value.replace(/'/g, "''"));
  url.pathname = `${url.pathname.replace(/\/$/, "")}(PartitionKey='${key(write.partitionKey ?? "")}',RowKey='${key(write.rowKey ?? "")}')`;
  return url.toString();
}
