// How an operation ends: one Ending value in, what the caller gets out (returned or thrown),
// with the record written and the observers told. Kept beside the loop, which calls it once.
import type { PipelineResponse } from "@azure/core-rest-pipeline";
import { CircuitOpenError } from "../errors/circuitOpenError.js";
import { PartitionBusyError } from "../errors/partitionBusyError.js";
import { logger } from "../logging/logger.js";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import { bodyText } from "../address/requestBodyText.js";
import type { TableWrite } from "../address/tableWrite.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { LOCAL_REFUSALS, type AttemptClass, type StopReason } from "../observers/retryEvents.js";
import { readBackAmbiguousWrite } from "../ambiguousWrites/ambiguousWriteReadBack.js";
import type { RetryInfo } from "./retryInfo.js";
import { attachRetryInfo } from "../address/requestMarks.js";
import type { AmbiguousWriteSettings } from "./retryPolicyOptions.js";
import type { Operation } from "./resilientRetryPolicy.js";

/** How an operation ends. Only `reason` is required: the rest defaults to the operation's last attempt. */
export interface Ending {
  readonly reason: StopReason;
  /** What the caller gets; defaults to the last attempt. */
  readonly result?: AttemptResult;
  /** Defaults to the result's class (`circuit_open` when nothing was sent). */
  readonly finalClass?: AttemptClass;
  /** Our own error (an abort), surfaced when no attempt's failure is in hand. */
  readonly error?: unknown;
  /** How an ambiguous write was settled, when it was read back. */
  readonly resolution?: AmbiguousWriteResult;
  /** When it ended, when the caller has just read the clock. */
  readonly endedAt?: number;
}

/** Stop reasons that are local refusals, and the reason label they count under. */

/** Says why a retriable failure was not retried, and what makes it retriable. */
const NOT_REPLAYABLE_WARNING =
  "Not retrying: the request body is a stream that the first attempt consumed; pass a stream factory to make it retriable.";

/** Ends `op`: records why, tells the observers, and returns or throws what the caller gets. */
export function endOperation(op: Operation, ending: Ending): PipelineResponse {
  const { info, request, facts } = op;
  const reason = ending.reason;
  const result = ending.result ?? op.last;
  const finalClass = ending.finalClass ?? result?.outcomeClass ?? "circuit_open";
  info.stopReason = reason;
  // Right after an attempt the loop's clock reading will do.
  info.elapsedInMs = (ending.endedAt ?? (facts.point === "attempt" ? op.clock : performance.now())) - op.started;
  if (reason === "body-not-replayable") logger.warning(NOT_REPLAYABLE_WARNING);
  // Blob's and Queue's results carry a copy of the request (`_response.request`): their response is marked too.
  // Not a Tables one (the SDK hands back the request itself, already marked): a property added to a response is not free.
  if (result?.response !== undefined && op.s.service !== "table") attachRetryInfo(result.response, info);
  const refused = LOCAL_REFUSALS[reason];
  const error = ending.error ?? (refused === undefined ? undefined : refusalError(op, reason));
  // With a real failure in hand, surface that rather than our own error: callers keep their statusCode checks.
  const surfaced = error !== undefined && result !== undefined && reason !== "aborted" ? undefined : error;
  if (op.write && info.unknownOutcomes > 0) noteAmbiguity(op, reason, ending.resolution);
  if (reason !== "success" && reason !== "permanent") {
    logger.warning(
      `Gave up on ${op.address.operation} (partition scope ${op.address.scopeKey ?? "unknown"}) after ${info.attempts} attempt(s): ` +
        `${reason} (last: ${finalClass}).`,
    );
  }
  // A resumed download's operation was reported when its first answer came; its resumes' attempts and retries are told as they happen.
  if (op.hooks.listens("onOperationEnd") && !op.resuming) {
    op.hooks.notify("onOperationEnd", {
      request,
      address: op.address,
      response: result?.response,
      error: surfaced ?? result?.error,
      attempts: info.attempts,
      finalClass,
      stopReason: reason,
      elapsedInMs: info.elapsedInMs,
    });
  }
  return surface(info, result, surfaced);
}

/** A local refusal's error, and when to come back (`getRetryInfo(error).retryAfterInMs`). */
function refusalError(op: Operation, reason: StopReason): Error | undefined {
  const { info, facts } = op;
  if (reason === "budget-exhausted") {
    info.retryAfterInMs = facts.budgetRetryAfterInMs > 0 ? facts.budgetRetryAfterInMs : op.s.budget?.retryAfterInMs();
    return undefined;
  }
  if (reason === "caller-busy") {
    info.retryAfterInMs = Math.max(facts.backoffInMs, facts.retryAfterInMs ?? 0);
    return undefined;
  }
  const refusal = op.refusal;
  const scope = refusal?.scope ?? op.address.scopeKey ?? "unknown";
  const retryAfterInMs = refusal?.retryAfterInMs ?? facts.gateDelayInMs;
  info.retryAfterInMs = retryAfterInMs;
  return reason === "partition-busy" ? new PartitionBusyError(scope, retryAfterInMs) : new CircuitOpenError(scope, retryAfterInMs);
}

/**
 * A retry answered what an earlier, unknown attempt's success would cause: read the entity
 * back. The same as sent: the write succeeded, report success. Otherwise the error surfaces
 * as it is, marked possibly applied.
 */
export async function settleAmbiguousWrite(op: Operation, write: TableWrite): Promise<Ending> {
  const options = op.s.ambiguousWrites as AmbiguousWriteSettings;
  const timeoutInMs = Math.min(options.readBackTimeoutInMs, op.deadline - performance.now());
  const outcome = await readBackAmbiguousWrite(op.request, options.readBackRoutes, write, bodyText(op.request), timeoutInMs);
  logger.info(`An ambiguous ${write.operation} was settled: ${outcome.result}.`);
  const endedAt = performance.now();
  if (outcome.result === "applied" && outcome.response !== undefined) {
    const response = outcome.response;
    return { reason: "success", result: { response, status: response.status, outcomeClass: "success" }, resolution: "applied", endedAt };
  }
  return { reason: "permanent", resolution: outcome.result, endedAt };
}

/** Marks a write that ended after an unknown outcome, and tells the observers. */
function noteAmbiguity(op: Operation, stopReason: StopReason, resolution: AmbiguousWriteResult | undefined): void {
  const write = op.tableWrite();
  // A batch's HTTP success can hide a failed sub-request (the SDK throws after reading the body).
  const result = resolution ?? (write?.kind === "batch" ? "not_resolvable" : stopReason === "success" ? undefined : "unresolved");
  if (result === undefined) return;
  op.info.ambiguousWrite = result;
  op.info.possiblyApplied = result !== "applied";
  op.hooks.notify("onAmbiguousWrite", {
    request: op.request,
    address: op.address,
    operation: write?.operation ?? "other",
    result,
    unknownOutcomes: op.info.unknownOutcomes,
  });
}

/**
 * Returns or throws exactly what the SDK would have seen from the last attempt. An error
 * that does not lead back to the request (our own, an abort) gets the operation's record
 * itself, so that `getRetryInfo(error)` and `isPossiblyApplied(error)` answer for the error
 * the caller catches. The record, not the request: the request's URL and headers would
 * carry a SAS or an Authorization header into whatever logs the error.
 */
function surface(info: RetryInfo, result: AttemptResult | undefined, error?: unknown): PipelineResponse {
  if (error !== undefined) throw withRecord(error, info);
  if (result?.response) return result.response;
  throw withRecord(result?.error, info);
}

function withRecord(error: unknown, info: RetryInfo): unknown {
  if (typeof error === "object" && error !== null && !("request" in error) && Object.isExtensible(error)) attachRetryInfo(error, info);
  return error;
}
