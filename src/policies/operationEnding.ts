// How an operation ends: one Ending value in, what the caller gets out (returned or thrown),
// with the record written and the observers told. Kept beside the loop, which calls it once.
import type { PipelineResponse } from "@azure/core-rest-pipeline";
import { CircuitOpenError } from "../errors/circuitOpenError.js";
import { PartitionBusyError } from "../errors/partitionBusyError.js";
import { logger } from "../logging/logger.js";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import { bodyText } from "../address/requestAddress.js";
import type { TableWrite } from "../address/tableWrite.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { LOCAL_REFUSALS, type AttemptClass, type StopReason } from "../observers/retryEvents.js";
import { readBackAmbiguousWrite } from "../ambiguousWrites/ambiguousWriteReadBack.js";
import { isTableAsAsked } from "../ambiguousWrites/writeOutcome.js";
import type { ReadBackOutcome } from "../ambiguousWrites/readBackDecision.js";
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
 * Settles a write whose last answer leaves its outcome in doubt (decideNext's `read-back`):
 * a retry answered what an earlier, unknown attempt's success would cause (409 after an
 * insert, ...), or the write's 2xx came with a body that does not parse. The entity is read
 * back where that can settle it: the same as sent, the write succeeded, and the caller gets
 * the success the SDK would have got. Otherwise the last answer (the error, or the 2xx) goes
 * to the caller as it is, marked possibly applied. A write that no read-back can settle (not
 * a Tables entity write) or that may not read back (`ambiguousWrites: false`) is marked at once.
 */
export async function settleAmbiguousWrite(op: Operation): Promise<Ending> {
  const options: AmbiguousWriteSettings | undefined = op.s.ambiguousWrites;
  const write: TableWrite | undefined = op.tableWrite();
  const outcome = await readBackIfPossible(op, options, write);
  logger.info(`An ambiguous ${op.address.operation} was settled: ${outcome.result}.`);
  const endedAt = performance.now();
  if (outcome.result === "applied" && outcome.response !== undefined) {
    const response = outcome.response;
    return { reason: "success", result: { response, status: response.status, outcomeClass: "success" }, resolution: "applied", endedAt };
  }
  // The last answer stands: a 2xx whose body did not parse ends as the success it is, an error as the failure it is.
  return { reason: op.last?.outcomeClass === "success" ? "success" : "permanent", resolution: outcome.result, endedAt };
}

async function readBackIfPossible(op: Operation, options: AmbiguousWriteSettings | undefined, write: TableWrite | undefined): Promise<ReadBackOutcome> {
  if (write === undefined) return { result: "not_resolvable" };
  if (options === undefined) return { result: "unresolved" };
  const timeoutInMs = Math.min(options.readBackTimeoutInMs, op.deadline - performance.now());
  return readBackAmbiguousWrite(op.request, options.readBackRoutes, write, bodyText(op.request), timeoutInMs);
}

/** Marks a write that ended after an unknown outcome, and tells the observers. */
function noteAmbiguity(op: Operation, stopReason: StopReason, resolution: AmbiguousWriteResult | undefined): void {
  const operation = op.address.operation;
  if (resolution === undefined && isTableAsAsked(operation, op.last)) {
    // Not an ambiguity: the SDK reports this answer as success, and the store is as asked (the SDK logs it at info too).
    logger.info(`${operation} retried after an unknown outcome: the table ${operation === "create_table" ? "exists" : "is gone"}, as asked.`);
    return;
  }
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
