// How an operation's end reads as its `outcome` label, decided once for both sinks: a failure means
// that the service or the network failed, not that the caller asked about something absent.
import type { StorageOperation } from "../address/storageOperation.js";
import type { StopReason } from "../observers/retryEvents.js";
import { OPERATION_OUTCOMES, type OperationOutcome } from "./metricNames.js";

type AnswerOutcome = Extract<OperationOutcome, "not_found" | "conflict" | "precondition_failed">;

/**
 * Where a 404, 409 or 412 that ends an operation (stop reason `permanent`) is the service's ordinary
 * answer to what was asked, counted under its own outcome (docs/metrics.md, "Answers are not failures"):
 * a 404 where the request names one thing to read, check, update or delete (not under a query, a list or
 * a write into a container or queue: the table, container or queue itself is missing, a failure); a 409
 * to a create or an insert (`upload_blob`: with `If-None-Match: *`); a 412 anywhere, since it only ever
 * answers a condition the request set. By status, not error code: Azure, Azurite and Cosmos DB differ.
 */
export const ORDINARY_ANSWERS: Readonly<Record<AnswerOutcome, { readonly status: number; readonly operations: readonly StorageOperation[] | "every" }>> = {
  not_found: {
    status: 404,
    operations: ["get_entity", "update_entity", "delete_entity", "delete_table", "download_blob", "get_blob_properties", "delete_blob",
      "get_container_properties", "delete_container", "get_queue_properties", "delete_queue", "update_message", "delete_message"],
  },
  conflict: { status: 409, operations: ["insert_entity", "create_table", "upload_blob", "create_container", "create_queue"] },
  precondition_failed: { status: 412, operations: "every" },
};
const ANSWERS = Object.entries(ORDINARY_ANSWERS) as Array<[AnswerOutcome, (typeof ORDINARY_ANSWERS)[AnswerOutcome]]>;

/** How every other end reads: only a give-up on the service's or the network's account is a `failure`. */
const OUTCOME_BY_STOP_REASON: Readonly<Record<StopReason, OperationOutcome>> = {
  success: "success", aborted: "aborted", "circuit-open": "circuit_open", "partition-busy": "partition_busy", permanent: "failure",
  "retries-exhausted": "failure", deadline: "failure", "body-not-replayable": "failure", "budget-exhausted": "failure", "caller-busy": "failure",
};

/** Every {@link StopReason} (for docs and tests). */
export const STOP_REASONS = Object.keys(OUTCOME_BY_STOP_REASON) as readonly StopReason[];

/** The outcomes bound at 0 when an operation is first seen (ratio queries need them); the answers appear when they happen. */
export const OUTCOMES_BOUND_UP_FRONT = OPERATION_OUTCOMES.filter((o) => Object.values(OUTCOME_BY_STOP_REASON).includes(o));

/** The outcome of an operation that stopped for `stopReason` on its last answer's `status` (undefined without one). Pure. */
export function operationOutcome(operation: StorageOperation, stopReason: StopReason, status: number | undefined): OperationOutcome {
  if (stopReason === "permanent") {
    for (const [outcome, answer] of ANSWERS) {
      if (answer.status === status && (answer.operations === "every" || answer.operations.includes(operation))) return outcome;
    }
  }
  return OUTCOME_BY_STOP_REASON[stopReason] ?? "failure";
}
