import type { AttemptResult } from "../classification/attemptResult.js";
import type { TableWrite } from "../address/tableWrite.js";
import type { StorageOperation } from "../address/storageOperation.js";

/**
 * True when `result` is the answer a retry gets if an earlier attempt of `write` was
 * applied: 409 for an insert (the entity exists), 404 for a delete (it is gone), 412 for
 * an update conditional on an ETag (the ETag changed). An update with `If-Match: *` or an
 * upsert succeeds again when repeated, so nothing needs settling.
 *
 * Each of these answers is also what another writer's success causes; whether anything
 * can tell the two apart is {@link readBackCanSettle}'s question.
 */
export function isAppliedAnswer(write: TableWrite, result: AttemptResult): boolean {
  const status = result.status;
  const code = result.errorCode;
  switch (write.kind) {
    case "insert":
      return status === 409 && (code === undefined || code === "EntityAlreadyExists");
    case "delete":
      return status === 404 && (code === undefined || code === "ResourceNotFound" || code === "EntityNotFound");
    case "replace":
    case "merge":
      return status === 412 && write.ifMatch !== undefined && write.ifMatch.trim() !== "*";
    default:
      return false;
  }
}

/**
 * True when `result` is what a retried table create or delete gets if an earlier attempt
 * applied: 409 `TableAlreadyExists` after `create_table`, 404 after `delete_table`. The SDK
 * takes both as success (`createTable` and `deleteTable` swallow them): the table exists, or
 * is gone, as asked. Whoever made it so, a table holds nothing of its writer's to tell them
 * apart (unlike an entity's content), so nothing is left to settle or mark.
 */
export function isTableAsAsked(operation: StorageOperation, result: AttemptResult | undefined): boolean {
  if (operation === "create_table") return result?.status === 409 && result.errorCode === "TableAlreadyExists";
  return operation === "delete_table" && result?.status === 404;
}
