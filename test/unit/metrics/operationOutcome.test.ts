import { describe, expect, it } from "vitest";
import { STORAGE_OPERATIONS, type StorageOperation } from "../../../src/address/storageOperation.js";
import { OPERATION_OUTCOMES } from "../../../src/metrics/metricNames.js";
import { operationOutcome, ORDINARY_ANSWERS, OUTCOMES_BOUND_UP_FRONT, STOP_REASONS } from "../../../src/metrics/operationOutcome.js";
import type { StopReason } from "../../../src/observers/retryEvents.js";

// The `outcome` label: a 404, 409 or 412 that answers what was asked is counted apart from the
// failures, on the operations where it is an ordinary answer, and nowhere else.

describe("operationOutcome: the answers counted apart from failures", () => {
  it.each<[StorageOperation, number, string]>([
    // 404: a point read, an existence check, an update or a delete of one named thing.
    ["get_entity", 404, "not_found"],
    ["update_entity", 404, "not_found"],
    ["delete_entity", 404, "not_found"],
    ["delete_table", 404, "not_found"],
    ["download_blob", 404, "not_found"],
    ["get_blob_properties", 404, "not_found"],
    ["delete_blob", 404, "not_found"],
    ["get_container_properties", 404, "not_found"],
    ["delete_container", 404, "not_found"],
    ["get_queue_properties", 404, "not_found"],
    ["delete_queue", 404, "not_found"],
    ["update_message", 404, "not_found"],
    ["delete_message", 404, "not_found"],
    // 409: a create or an insert of something that exists.
    ["insert_entity", 409, "conflict"],
    ["create_table", 409, "conflict"],
    ["upload_blob", 409, "conflict"],
    ["create_container", 409, "conflict"],
    ["create_queue", 409, "conflict"],
    // 412: a condition the request set, on any operation.
    ["update_entity", 412, "precondition_failed"],
    ["delete_entity", 412, "precondition_failed"],
    ["download_blob", 412, "precondition_failed"],
    ["put_block_list", 412, "precondition_failed"],
    ["append_block", 412, "precondition_failed"],
    ["other", 412, "precondition_failed"],
  ])("%s answered %i ends %s", (operation, status, outcome) => {
    expect(operationOutcome(operation, "permanent", status)).toBe(outcome);
  });

  it.each<[StorageOperation, number]>([
    // A 404 on a query, a list or a write into a container or queue: the table, container or queue is missing.
    ["query_entities", 404],
    ["query_tables", 404],
    ["list_blobs", 404],
    ["list_containers", 404],
    ["list_queues", 404],
    ["send_message", 404],
    ["receive_messages", 404],
    ["peek_messages", 404],
    ["clear_messages", 404],
    ["upload_blob", 404],
    ["put_block", 404],
    ["put_block_list", 404],
    ["append_block", 404],
    ["copy_blob", 404],
    ["insert_entity", 404],
    ["upsert_entity", 404],
    ["batch", 404],
    ["other", 404],
    // A 409 that is not a create's "exists": a delete in progress, a lease, a batch, an update.
    ["update_entity", 409],
    ["delete_blob", 409],
    ["get_entity", 409],
    ["batch", 409],
    ["other", 409],
    // Other 4xx are failures wherever they come.
    ["get_entity", 403],
    ["get_entity", 400],
    ["insert_entity", 413],
    ["get_entity", 501],
  ])("%s answered %i is a failure", (operation, status) => {
    expect(operationOutcome(operation, "permanent", status)).toBe("failure");
  });

  it("only an operation that stopped on its permanent answer can end as an answer: a 404 retried until retries ran out is a failure", () => {
    for (const reason of STOP_REASONS.filter((r) => r !== "permanent")) {
      expect(operationOutcome("get_entity", reason, 404), reason).not.toBe("not_found");
      expect(operationOutcome("insert_entity", reason, 409), reason).not.toBe("conflict");
      expect(operationOutcome("update_entity", reason, 412), reason).not.toBe("precondition_failed");
    }
    expect(operationOutcome("get_entity", "retries-exhausted", 404)).toBe("failure");
    // Without an answer (a thrown error): a failure whatever the operation.
    expect(operationOutcome("get_entity", "permanent", undefined)).toBe("failure");
  });

  it("reads every other stop reason as before: success, aborted, circuit_open, partition_busy, the rest failure", () => {
    const expected: Record<StopReason, string> = {
      success: "success",
      permanent: "failure",
      aborted: "aborted",
      "retries-exhausted": "failure",
      deadline: "failure",
      "body-not-replayable": "failure",
      "circuit-open": "circuit_open",
      "budget-exhausted": "failure",
      "partition-busy": "partition_busy",
      "caller-busy": "failure",
    };
    expect([...STOP_REASONS].sort()).toEqual(Object.keys(expected).sort());
    for (const reason of STOP_REASONS) expect(operationOutcome("get_entity", reason, 500), reason).toBe(expected[reason]);
  });

  it("keeps the label bounded: every result is one of OPERATION_OUTCOMES, whatever the status", () => {
    const seen = new Set<string>();
    for (const operation of STORAGE_OPERATIONS) {
      for (const reason of STOP_REASONS) {
        for (const status of [undefined, 200, 204, 400, 403, 404, 409, 412, 418, 429, 500, 503, 599, 1234, -1]) seen.add(operationOutcome(operation, reason, status));
      }
    }
    expect([...seen].sort()).toEqual([...OPERATION_OUTCOMES].sort());
  });

  it("names only known operations, and binds up front the outcomes every operation can end with, not the answers", () => {
    for (const answer of Object.values(ORDINARY_ANSWERS)) {
      if (answer.operations !== "every") for (const operation of answer.operations) expect(STORAGE_OPERATIONS).toContain(operation);
    }
    expect(OUTCOMES_BOUND_UP_FRONT).toEqual(["success", "failure", "circuit_open", "partition_busy", "aborted"]);
  });
});
