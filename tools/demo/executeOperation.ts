import { odata, type TableClient, type TransactionAction } from "@azure/data-tables";
import { getRetryInfo } from "azure-storage-resilience";
import type { OperationResult } from "./operationResult.js";
import type { PlannedOperation } from "./workload.js";

/**
 * Runs one planned operation on `client` and reports how it ended; never throws. Reads of
 * a missing row count as successes (the service answered), any thrown error as a failure,
 * the run's abort as aborted.
 */
export async function executeOperation(client: TableClient, operation: PlannedOperation, runStartedAt: number, signal: AbortSignal): Promise<OperationResult> {
  const started = performance.now();
  const base = { id: operation.id, partition: operation.partition, kind: operation.kind, rowKeys: operation.rowKeys, startedAtInMs: Math.round(started - runStartedAt) };
  try {
    await perform(client, operation, signal);
    return { ...base, latencyInMs: performance.now() - started, outcome: "success" };
  } catch (error) {
    const latencyInMs = performance.now() - started;
    if (isNotFound(error) && operation.kind === "read") return { ...base, latencyInMs, outcome: "success" };
    const aborted = signal.aborted || (error as { name?: unknown } | null)?.name === "AbortError";
    return { ...base, latencyInMs, outcome: aborted ? "aborted" : "failed", ...describeFailure(error) };
  }
}

async function perform(client: TableClient, operation: PlannedOperation, abortSignal: AbortSignal): Promise<void> {
  const { partition: partitionKey, rowKeys, id } = operation;
  const payload = (rowKey: string) => ({ partitionKey, rowKey, operation: id, note: "written by the azure-storage-resilience demo" });
  switch (operation.kind) {
    case "insert":
      await client.createEntity(payload(rowKeys[0] ?? ""), { abortSignal });
      return;
    case "upsert":
      await client.upsertEntity(payload(rowKeys[0] ?? ""), "Replace", { abortSignal });
      return;
    case "read":
      await client.getEntity(partitionKey, rowKeys[0] ?? "", { abortSignal });
      return;
    case "query": {
      const pages = client.listEntities({ queryOptions: { filter: odata`PartitionKey eq ${partitionKey}` }, abortSignal }).byPage({ maxPageSize: 10 });
      await pages.next();
      return;
    }
    case "batch": {
      const actions: TransactionAction[] = rowKeys.map((rowKey) => ["create", payload(rowKey)]);
      await client.submitTransaction(actions, { abortSignal });
      return;
    }
  }
}

function isNotFound(error: unknown): boolean {
  return (error as { statusCode?: unknown } | null)?.statusCode === 404;
}

/** The status and a code, never the message: messages can quote URLs and request details. */
function describeFailure(error: unknown): Pick<OperationResult, "status" | "errorCode" | "stopReason" | "possiblyApplied"> {
  const candidate = error as { statusCode?: unknown; code?: unknown; details?: { errorCode?: unknown } } | null;
  const result: Pick<OperationResult, "status" | "errorCode" | "stopReason" | "possiblyApplied"> = {};
  const info = getRetryInfo(error);
  // A `$batch` answers 202 and fails inside its body: "success" at the HTTP level, so say what matters.
  const stopReason = info?.possiblyApplied ? "possibly applied" : info?.stopReason;
  if (stopReason !== undefined) result.stopReason = stopReason;
  if (info?.possiblyApplied === true) result.possiblyApplied = true;
  if (typeof candidate?.statusCode === "number") result.status = candidate.statusCode;
  const code = candidate?.details?.errorCode ?? candidate?.code;
  if (typeof code === "string" && /^[A-Za-z0-9_]+$/.test(code)) result.errorCode = code;
  return result;
}
