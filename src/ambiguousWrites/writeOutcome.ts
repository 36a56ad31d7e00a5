// What an attempt's answer says about whether a write applied: unknown (it may have), the answer its
// own earlier success would cause, and whether reading back can tell that success from another writer's.
import type { AttemptResult } from "../classification/attemptResult.js";
import { errorCodeOf } from "../classification/networkErrors.js";
import type { StorageOperation } from "../address/storageOperation.js";
import type { TableWrite } from "../address/tableWrite.js";

/**
 * Network errors raised before a connection carried the request: the store cannot have
 * seen it. Every other network error or timeout may have struck after the request was sent.
 */
const NOT_SENT_ERROR_CODES: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EHOSTDOWN",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/**
 * True when an attempt's outcome is unknown: the request may have been applied although
 * no success came back. A reset, a socket error or a timeout after the request could have
 * left (our per-attempt timeout included); an answer that could not be read (a body cut
 * mid-way, the SDK's `PARSE_ERROR`, Node's `HPE_*` parser errors: the store answered, so it
 * had the request; a write's 2xx whose body does not parse, which the caller will get as an
 * error); and 500/502/504 answers (500 OperationTimedOut: "the operation may or
 * may not have succeeded"). 503 ServerBusy, 429 and 408 say the request was not processed;
 * a connection that never opened cannot have carried it. Nor is a failed changeset inside a
 * `$batch` answered 202, whatever its status: the transaction was rolled back.
 */
export function isUnknownOutcome(result: AttemptResult): boolean {
  if (result.unreadableBody === true) return true;
  const cls = result.outcomeClass;
  if (cls !== "transient" && cls !== "timeout") return false;
  if (result.inChangeset === true) return false;
  if (result.status !== undefined) return result.status === 500 || result.status === 502 || result.status === 504;
  const code = errorCodeOf(result.error);
  return code === undefined || !NOT_SENT_ERROR_CODES.has(code);
}

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

/**
 * True when reading the entity back can show that *this* write applied; only inserts.
 *
 * - An insert: the stored entity is compared with every property and type sent. An equal
 *   entity is reported as this insert's success. It may be another writer's identical
 *   insert of the same keys; the caller decides what is identical, so an insert that must
 *   tell writers apart (a lock, a claim) carries a value only its writer writes (an owner,
 *   a nonce), and then equal content is proof. See docs/data-safety.md.
 * - An update conditional on an ETag (412 on the retry): the stored content and ETag are
 *   what any writer of the same content leaves, and an ETag is a timestamp, not a writer's
 *   mark. Two writers racing on one stale ETag would both be told they won. Not settled.
 * - A delete (404 on the retry, `If-Match: *` or an ETag): an absent entity is what every
 *   delete leaves, whoever sent it; a writer cannot make it its own. Not settled.
 */
export function readBackCanSettle(write: TableWrite): boolean {
  return write.kind === "insert";
}
