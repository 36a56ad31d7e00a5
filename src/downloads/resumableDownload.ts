// A Get Blob answer's streamed body is read after the retry policy has returned, so a body cut
// mid-way is no attempt the loop saw. The caller gets a body that, when cut, asks the same
// operation for the rest of the range (`Operation.resume`): one more attempt through the same
// classification, backoff, gate, budget and records, its bytes spliced in order, each byte once.
import { Readable } from "node:stream";
import type { PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { classify } from "../classification/classify.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { RequestAddress } from "../address/requestAddress.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import { withRecord } from "../address/requestMarks.js";
import { isResilienceError } from "../errors/resilienceError.js";
import { aimAtRest, overrunError, readBlobDownload, resumedAnswerProblem, type BlobDownload } from "./blobDownload.js";

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
  withRecord(error, op.info);
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

/** What a {@link ResumingBody} asks of the operation it belongs to. */
export interface ResumeHooks {
  /**
   * Asks for the rest of the download from blob offset `position`, after `cut` (the source's
   * error, or one saying it ended early); resolves with the answer, or rejects with what ends
   * the caller's stream.
   */
  resume(position: number, cut: unknown): Promise<PipelineResponse>;
  /** Whether the caller has aborted: a source's failure is then the abort, not a cut. */
  callerAborted(): boolean;
  /** The body ends with `error`, not the caller's abort: the last word on it (marked, logged). */
  failed(error: Error): void;
}

/** What a body that ended early fails with: the code classification reads as transient. */
const PREMATURE_END = "ERR_STREAM_PREMATURE_CLOSE";

/** Swallows a detached source's late error (an `error` event nobody listens to would throw). */
const ignore = (): void => undefined;

/**
 * A download's body that resumes itself when cut. A Readable of its own rather than a
 * PassThrough: the source changes under it, and a source's failure must reach the retry loop, not
 * the caller (a pipe would pass it on, or end the PassThrough at the cut). It never emits
 * `aborted` (which the SDK's `RetriableReadableStream` takes for the caller's abort): it ends with
 * the bytes announced, or with one error, an `AbortError` when the caller aborted. Reading pauses
 * its source while its own buffer is full, so memory stays at a stream's buffers whatever the blob's size.
 */
export class ResumingBody extends Readable {
  readonly #download: BlobDownload;
  readonly #hooks: ResumeHooks;
  #source: NodeJS.ReadableStream;
  /** The blob offset of the next byte to pass on. */
  #position: number;
  #resuming = false;

  constructor(source: NodeJS.ReadableStream, download: BlobDownload, hooks: ResumeHooks) {
    super();
    this.#download = download;
    this.#hooks = hooks;
    this.#position = download.start;
    this.#source = source;
    this.#attach(source);
  }

  override _read(): void {
    if (!this.#resuming) this.#source.resume();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.#detach();
    (this.#source as { destroy?: () => void }).destroy?.();
    callback(error);
  }

  #attach(source: NodeJS.ReadableStream): void {
    this.#source = source;
    source.on("data", this.#onData);
    source.once("end", this.#onEnd);
    source.once("error", this.#onError);
  }

  #detach(): void {
    const source = this.#source;
    source.removeListener("data", this.#onData);
    source.removeListener("end", this.#onEnd);
    source.removeListener("error", this.#onError);
    source.on("error", ignore);
  }

  readonly #onData = (chunk: Buffer): void => {
    if (this.#position + chunk.length > this.#download.end + 1) {
      this.#fail(overrunError(this.#download));
      return;
    }
    this.#position += chunk.length;
    if (!this.push(chunk)) this.#source.pause();
  };

  readonly #onEnd = (): void => {
    this.#detach();
    if (this.#position > this.#download.end) {
      this.push(null);
      return;
    }
    const { start, end } = this.#download;
    this.#cut(Object.assign(new Error(`The body ended after ${this.#position - start} of ${end - start + 1} bytes.`), { code: PREMATURE_END }));
  };

  readonly #onError = (error: unknown): void => {
    this.#detach();
    // The caller's abort reaches the body as a reset, like a cut: only the caller's signal tells them apart.
    if (this.#hooks.callerAborted()) this.destroy(new AbortError("The operation was aborted."));
    else this.#cut(error);
  };

  #cut(error: unknown): void {
    (this.#source as { destroy?: () => void }).destroy?.();
    this.#resuming = true;
    const position = this.#position;
    this.#hooks.resume(position, error).then(
      (answer) => this.#continueWith(answer, position),
      (failure: unknown) => {
        this.#resuming = false;
        if (this.destroyed) return;
        if ((failure as { name?: unknown } | undefined)?.name === "AbortError") this.destroy(failure as Error);
        else this.#fail(failure instanceof Error ? failure : new Error("Resuming a blob download failed.", { cause: failure }));
      },
    );
  }

  #continueWith(answer: PipelineResponse, position: number): void {
    this.#resuming = false;
    const body = answer.readableStreamBody;
    const problem = this.destroyed ? undefined : resumedAnswerProblem(this.#download, position, answer);
    if (this.destroyed || problem !== undefined || body === undefined) {
      (body as { destroy?: () => void } | undefined)?.destroy?.();
      if (problem !== undefined) this.#fail(problem);
      return;
    }
    this.#attach(body);
  }

  #fail(error: Error): void {
    this.#hooks.failed(error);
    this.destroy(error);
  }
}
