import type { TableWrite } from "../address/tableWrite.js";

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
