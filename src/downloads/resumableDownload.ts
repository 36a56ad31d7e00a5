// The retry loop's hook for blob downloads: a Get Blob answer's streamed body is read after the
// policy has returned, so a body cut mid-way is no attempt the loop saw. This hands the caller a
// body that, when cut, asks the same operation for the rest of the range (`Operation.resume`):
// one more attempt through the same classification, backoff, gate, budget and records.
import type { PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { classify } from "../classification/classify.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { RequestAddress } from "../address/requestAddress.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import { attachRetryInfo } from "../address/requestMarks.js";
import { isResilienceError } from "../errors/resilienceError.js";
import { aimAtRest, readBlobDownload, type BlobDownload } from "./blobDownload.js";
import { ResumingBody } from "./resumingBody.js";

/**
 * What a resumable download needs of its operation: the retry loop's `Operation` is one. Said
 * here, not imported, so that policies/ uses downloads/ and not the other way round.
 */
export interface ResumableOperation {
  readonly request: PipelineRequest;
  readonly address: RequestAddress;
  /** The operation's record (a `RetryInfo`), which the failed body carries. */
  readonly info: { readonly attempts: number; readonly resumes?: number };
  readonly s: { readonly rules: ClassificationRules | undefined };
  /** Goes on from `cut` as from a failed attempt, the request already pointed at the rest; resolves with the answer. */
  resume(next: SendRequest, cut: AttemptResult): Promise<PipelineResponse>;
}

/**
 * `response`, its body replaced by one that resumes when cut, when it is a blob download's that
 * can be resumed byte for byte (blobDownload.ts says which); otherwise `response` as it is. Cheap
 * for every other answer: one property read.
 */
export function resumableDownload(op: ResumableOperation, next: SendRequest, response: PipelineResponse): PipelineResponse {
  const body = response.readableStreamBody;
  if (body === undefined || op.address.operation !== "download_blob") return response;
  const download = readBlobDownload(op.request, response);
  if (download === undefined) return response;
  response.readableStreamBody = new ResumingBody(body, download, {
    resume: (position, cut) => resume(op, next, download, position, cut),
    callerAborted: () => op.request.abortSignal?.aborted === true,
    failed: (error) => failed(op, error),
  });
  return response;
}

/** The body ends with `error`: it carries the operation's record (getRetryInfo), and the log says why, in the package's words only. */
function failed(op: ResumableOperation, error: Error): void {
  if (!("request" in error) && Object.isExtensible(error)) attachRetryInfo(error, op.info);
  const code = isResilienceError(error) ? error.code : safeErrorCode((error as { code?: unknown }).code);
  logger.warning(`A blob download stopped after ${op.info.attempts} attempt(s) and ${op.info.resumes ?? 0} resume(s): ${code ?? safeErrorCode(error.name)}.`);
}

/** The rest of `download` from `position`, asked for after `cut` as the operation's next attempt. */
function resume(op: ResumableOperation, next: SendRequest, download: BlobDownload, position: number, cut: unknown): Promise<PipelineResponse> {
  aimAtRest(op.request, download, position);
  const outcomeClass = classify({ error: cut }, op.s.rules);
  logger.info(
    `A blob download's body was cut after ${position - download.start} of ${download.end - download.start + 1} bytes (${outcomeClass}); ` +
      `asking for bytes ${position}-${download.end} of the same version.`,
  );
  return op.resume(next, { error: cut, outcomeClass });
}
