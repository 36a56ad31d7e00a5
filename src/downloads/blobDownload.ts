// What a Get Blob answer says about the bytes its body carries, and what an answer to the request
// for the rest must say: pure readers of headers, no I/O. resumableDownload.ts acts on them.
import { RestError, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { ResilienceError } from "../errors/resilienceError.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";

/** A Get Blob answer whose body can be resumed: the bytes it carries and the version they are of. */
export interface BlobDownload {
  /** The first answer's ETag: the resumed request's `If-Match`, so a changed blob answers 412. */
  readonly etag: string;
  /** Offset in the blob of the body's first byte (0 for a whole blob). */
  readonly start: number;
  /** Offset in the blob of the body's last byte, inclusive: `start + Content-Length - 1`. */
  readonly end: number;
}

/** `Content-Range: bytes <first>-<last>/<size or *>`, as Azure Storage writes it. */
const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(?:\d+|\*)$/;
const DIGITS = /^\d+$/;

/**
 * The download a Get Blob answer starts (200 for a whole blob, 206 for a range), or undefined
 * when its body cannot be resumed byte for byte: no ETag, no (or an empty) `Content-Length`, a
 * `Content-Range` that does not match it, a body the transport decompresses (its bytes are not
 * the blob's), or a structured body (`x-ms-structured-body`, the SDK's CRC64 framing, which a
 * range cut in two would break).
 */
export function readBlobDownload(request: PipelineRequest, response: PipelineResponse): BlobDownload | undefined {
  const status = response.status;
  if (status !== 200 && status !== 206) return undefined;
  const headers = response.headers;
  const etag = headers.get("etag");
  const length = toInteger(headers.get("content-length"));
  if (etag === undefined || etag === "" || length === undefined || length === 0) return undefined;
  if (request.headers.has("x-ms-structured-body") || headers.has("x-ms-structured-body")) return undefined;
  if (isDecompressed(request, response)) return undefined;
  if (status === 200) return { etag, start: 0, end: length - 1 };
  const range = parseContentRange(headers.get("content-range"));
  if (range === undefined || range.end - range.start + 1 !== length) return undefined;
  return { etag, start: range.start, end: range.end };
}

/**
 * Points `request` at the rest of `download` from `position`: `x-ms-range` (which Azure reads
 * before `Range`, so a caller's `Range` goes) and `If-Match` on the first answer's ETag.
 */
export function aimAtRest(request: PipelineRequest, download: BlobDownload, position: number): void {
  request.headers.delete("range");
  request.headers.set("x-ms-range", `bytes=${position}-${download.end}`);
  request.headers.set("If-Match", download.etag);
}

/**
 * Why the answer to the request for the rest (from blob offset `position`) cannot continue the
 * body, as the error the caller's stream ends with; undefined when it can: 206, the same ETag,
 * exactly the bytes asked for, as a stream. A failure is the service's `RestError`: a blob changed
 * meanwhile answers 412 ConditionNotMet (the If-Match), a deleted one 404, as they would any
 * `If-Match` download; an answer of another version or range stops it as DOWNLOAD_RANGE_MISMATCH.
 */
export function resumedAnswerProblem(download: BlobDownload, position: number, answer: PipelineResponse): Error | undefined {
  const status = answer.status;
  if (status !== 206 && status !== 200) return restErrorOf(answer);
  const range = parseContentRange(answer.headers.get("content-range"));
  const length = toInteger(answer.headers.get("content-length"));
  const expected = download.end - position + 1;
  const sameVersion = answer.headers.get("etag") === download.etag;
  if (!sameVersion || status !== 206 || range?.start !== position || range.end !== download.end || length !== expected || answer.readableStreamBody === undefined) {
    const got = !sameVersion ? "another version (ETag)" : range === undefined ? `status ${status} without a matching Content-Range` : `bytes ${range.start}-${range.end}`;
    return new ResilienceError("DOWNLOAD_RANGE_MISMATCH", `Resuming a blob download: asked for bytes ${position}-${download.end}, the answer carried ${got}; the download stopped.`);
  }
  return undefined;
}

/** A body that ran past the bytes its answer announced: nothing past `end` is passed on. */
export function overrunError(download: BlobDownload): Error {
  return new ResilienceError("DOWNLOAD_RANGE_MISMATCH", `A blob download's body ran past the ${download.end - download.start + 1} bytes its answer announced; the download stopped.`);
}

/** A failed answer as the SDK would have thrown it: its status and (checked) error code, the response kept non-enumerable. */
function restErrorOf(answer: PipelineResponse): RestError {
  const code = safeErrorCode(answer.headers.get("x-ms-error-code"));
  return new RestError(`Resuming a blob download: the service answered ${answer.status}${code === undefined ? "" : ` ${code}`}.`, {
    statusCode: answer.status,
    code,
    request: answer.request,
    response: answer,
  });
}

function parseContentRange(value: string | undefined): { start: number; end: number } | undefined {
  const match = value === undefined ? null : CONTENT_RANGE.exec(value);
  if (match === null) return undefined;
  const start = Number(match[1]);
  const end = Number(match[2]);
  return Number.isSafeInteger(start) && Number.isSafeInteger(end) && end >= start ? { start, end } : undefined;
}

function toInteger(value: string | undefined): number | undefined {
  if (value === undefined || !DIGITS.test(value)) return undefined;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The Node transport decodes gzip and deflate bodies when the request accepts them: offsets then no longer match. */
function isDecompressed(request: PipelineRequest, response: PipelineResponse): boolean {
  const encoding = response.headers.get("content-encoding");
  if (encoding === undefined || encoding === "" || encoding === "identity") return false;
  const accepted = request.headers.get("accept-encoding") ?? "";
  return accepted.includes("gzip") || accepted.includes("deflate");
}
