import type { PipelineResponse } from "@azure/core-rest-pipeline";
import type { RequestAddress } from "../address/requestAddress.js";
import { readChangesetFailure } from "../classification/changesetFailure.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import { classify } from "../classification/classify.js";
import type { AttemptResult } from "../classification/attemptResult.js";

/**
 * A Tables entity group transaction (`POST $batch`) answered 202 Accepted whose changeset
 * failed: the attempt, classified by the changeset's status and error code as if they were
 * the answer's (503 ServerBusy `throttled`, 500 OperationTimedOut `timeout`, 409 `permanent`),
 * with the changeset's own retry hint. Azure answers 202 "even if one of the operations in
 * the change set fails", and a changeset is atomic: a failed one applied nothing, so the
 * whole batch may be sent again (docs/retry.md, "Tables transactions").
 *
 * Undefined for every other answer, so they are classified as before. Only a Tables `$batch`
 * answered 202 with a multipart body is read (at most `MAX_BATCH_SCAN_CHARS`): any other
 * request costs two comparisons.
 */
export function failedChangeset(
  response: PipelineResponse,
  address: RequestAddress,
  rules: ClassificationRules | undefined,
): AttemptResult | undefined {
  if (response.status !== 202 || address.service !== "table" || address.operation !== "batch") return undefined;
  const text = response.bodyAsText;
  if (!text || !(response.headers.get("content-type") ?? "").toLowerCase().startsWith("multipart/mixed")) return undefined;
  const failure = readChangesetFailure(text);
  if (failure === undefined) return undefined;
  const { status, errorCode, retryAfterInMs } = failure;
  return { response, status, errorCode, retryAfterInMs, inChangeset: true, outcomeClass: classify({ status, errorCode }, rules) };
}
