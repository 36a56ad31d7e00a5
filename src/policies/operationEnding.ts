// How an operation ends: decideNext's stop step and what the loop holds in, what the caller gets
// out (returned or thrown), with the record written and the observers told; and the read-back
// that settles a write whose outcome was in doubt. Kept beside the loop, which calls them.
import { AbortError } from "@azure/abort-controller";
import type { PipelineResponse } from "@azure/core-rest-pipeline";
import { CircuitOpenError } from "../errors/circuitOpenError.js";
import { PartitionBusyError } from "../errors/partitionBusyError.js";
import { logger } from "../logging/logger.js";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import { bodyText } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { LOCAL_REFUSALS, type StopReason } from "../observers/retryEvents.js";
import { readBackAmbiguousWrite } from "../ambiguousWrites/ambiguousWriteReadBack.js";
import type { ReadBackOutcome } from "../ambiguousWrites/readBackDecision.js";
import type { Refusal } from "../breaker/attemptGate.js";
import type { RetryInfo } from "./retryInfo.js";
import { attachRetryInfo, withRecord } from "../address/requestMarks.js";
import type { AmbiguousWriteSettings, RetryPolicySettings } from "./retryPolicyOptions.js";
import type { AdmittedOperation } from "./admittedOperation.js";
import type { DecisionFacts } from "./decisionFacts.js";
import type { StopStep } from "./decideNext.js";

/** What the ending reads of its operation: all of it fixed when the operation starts. */
export type EndingContext = Pick<AdmittedOperation, "request" | "address" | "info" | "hooks" | "s" | "write">;

/** How an operation ends: decideNext's step, and what the loop holds when it takes it. */
export interface Ending {
  readonly step: StopStep;
  /** The facts the step was decided on. */
  readonly facts: DecisionFacts;
  /** The last attempt (the primary's, or the secondary's success); undefined when none was sent. */
  readonly last: AttemptResult | undefined;
  /** The read-back's outcome, when the write was read back. */
  readonly readBack: ReadBackOutcome | undefined;
  /** With `answer: "abort"`: the abort a wait saw, if one did (else our own AbortError). */
  readonly abort: unknown;
  /** The gate's last refusal, if it refused. */
  readonly refusal: Refusal | undefined;
}

/** Says why a retriable failure was not retried, and what makes it retriable. */
const NOT_REPLAYABLE_WARNING =
  "Not retrying: the request body is a stream that the first attempt consumed; pass a stream factory to make it retriable.";

/**
 * Ends an operation after `elapsedInMs`: records why, tells the observers (unless `resumed`: a
 * resumed download's operation was reported when its first answer came), and returns or throws
 * what the caller gets.
 */
export function endOperation(op: EndingContext, ending: Ending, elapsedInMs: number, resumed: boolean): PipelineResponse {
  const { info, request } = op;
  const { step, readBack } = ending;
  const reason = step.reason;
  const response = step.answer === "read-back" ? (readBack?.response as PipelineResponse) : undefined;
  const result: AttemptResult | undefined = response === undefined ? ending.last : { response, status: response.status, outcomeClass: "success" };
  const finalClass = step.answer === "abort" ? "aborted" : (result?.outcomeClass ?? "circuit_open");
  info.stopReason = reason;
  info.elapsedInMs = elapsedInMs;
  if (reason === "body-not-replayable") logger.warning(NOT_REPLAYABLE_WARNING);
  // Blob's and Queue's results carry a copy of the request (`_response.request`): their response is marked too.
  // Not a Tables one (the SDK hands back the request itself, already marked): a property added to a response is not free.
  if (result?.response !== undefined && op.s.service !== "table") attachRetryInfo(result.response, info);
  if (LOCAL_REFUSALS[reason] !== undefined) info.retryAfterInMs = refusalRetryAfterInMs(reason, ending.facts, ending.refusal, op.s);
  const error = step.answer === "abort" ? (ending.abort ?? new AbortError("The operation was aborted.")) : step.answer === "refusal" ? refusalError(op, ending) : undefined;
  if (step.ambiguity !== undefined) noteAmbiguity(op, step.ambiguity);
  if (reason !== "success" && reason !== "permanent") {
    logger.warning(
      `Gave up on ${op.address.operation} (partition scope ${op.address.scopeKey ?? "unknown"}) after ${info.attempts} attempt(s): ` +
        `${reason} (last: ${finalClass}).`,
    );
  }
  // A resumed download's resumes' attempts and retries are told as they happen.
  if (op.hooks.listens("onOperationEnd") && !resumed) {
    op.hooks.notify("onOperationEnd", {
      request,
      address: op.address,
      response: result?.response,
      error: error ?? result?.error,
      attempts: info.attempts,
      finalClass,
      stopReason: reason,
      elapsedInMs: info.elapsedInMs,
    });
  }
  return surface(info, result, error);
}

/**
 * When to come back after a local refusal (`getRetryInfo(error).retryAfterInMs`), from the facts
 * the operation stopped on: the budget's refill, the backoff it would have slept, or the gate's word.
 */
function refusalRetryAfterInMs(reason: StopReason, f: DecisionFacts, refusal: Refusal | undefined, s: RetryPolicySettings): number | undefined {
  if (reason === "budget-exhausted") return f.budgetRetryAfterInMs > 0 ? f.budgetRetryAfterInMs : s.budget?.retryAfterInMs();
  if (reason === "caller-busy") return Math.max(f.backoffInMs, f.retryAfterInMs ?? 0);
  return refusal?.retryAfterInMs ?? f.gateDelayInMs;
}

/** Our own error for a refusal with no attempt's answer in hand. */
function refusalError(op: EndingContext, ending: Ending): Error {
  const scope = ending.refusal?.scope ?? op.address.scopeKey ?? "unknown";
  const retryAfterInMs = op.info.retryAfterInMs ?? 0;
  return ending.step.reason === "partition-busy" ? new PartitionBusyError(scope, retryAfterInMs) : new CircuitOpenError(scope, retryAfterInMs);
}

/**
 * Carries out decideNext's `read-back` of a write whose outcome is in doubt (its `settled` rows
 * say what follows). A write that is not a Tables entity write is `not_resolvable`, one that may
 * not read back (`ambiguousWrites: false`) `unresolved`, at once.
 */
export async function readBack(op: EndingContext, deadline: number): Promise<ReadBackOutcome> {
  const outcome = await readBackIfPossible(op, op.s.ambiguousWrites, deadline);
  logger.info(`An ambiguous ${op.address.operation} was settled: ${outcome.result}.`);
  return outcome;
}

async function readBackIfPossible(op: EndingContext, options: AmbiguousWriteSettings | undefined, deadline: number): Promise<ReadBackOutcome> {
  const write = op.address.tableWrite;
  if (write === undefined) return { result: "not_resolvable" };
  if (options === undefined) return { result: "unresolved" };
  const timeoutInMs = Math.min(options.readBackTimeoutInMs, deadline - performance.now());
  return readBackAmbiguousWrite(op.request, options.readBackPolicy, write, bodyText(op.request), timeoutInMs);
}

/** Marks a write that ended after an unknown outcome as decideNext reported it, and tells the observers. */
function noteAmbiguity(op: EndingContext, ambiguity: AmbiguousWriteResult | "as-asked"): void {
  const operation = op.address.operation;
  if (ambiguity === "as-asked") {
    // Not an ambiguity: the SDK reports this answer as success, and the store is as asked (the SDK logs it at info too).
    logger.info(`${operation} retried after an unknown outcome: the table ${operation === "create_table" ? "exists" : "is gone"}, as asked.`);
    return;
  }
  op.info.ambiguousWrite = ambiguity;
  op.info.possiblyApplied = ambiguity !== "applied";
  op.hooks.notify("onAmbiguousWrite", {
    request: op.request,
    address: op.address,
    operation: op.address.tableWrite?.operation ?? "other",
    result: ambiguity,
    unknownOutcomes: op.info.unknownOutcomes,
  });
}

/**
 * Returns or throws exactly what the SDK would have seen from the last attempt. An error
 * that does not lead back to the request (our own, an abort) gets the operation's record
 * itself, so that `getRetryInfo(error)` (its `possiblyApplied` above all) answers for the error
 * the caller catches. The record, not the request: the request's URL and headers would
 * carry a SAS or an Authorization header into whatever logs the error.
 */
function surface(info: RetryInfo, result: AttemptResult | undefined, error?: unknown): PipelineResponse {
  if (error !== undefined) throw withRecord(error, info);
  if (result?.response) return result.response;
  throw withRecord(result?.error, info);
}
