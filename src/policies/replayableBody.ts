import type { PipelineRequest, RequestBodyType } from "@azure/core-rest-pipeline";

/**
 * True when the request's body can be sent again: strings, buffers, blobs, form data and
 * stream *factories* can; a stream object is consumed by the first attempt and cannot.
 */
export function isReplayable(request: PipelineRequest): boolean {
  if (!isBodyReplayable(request.body)) return false;
  return request.multipartBody?.parts.every((part) => isBodyReplayable(part.body as RequestBodyType)) ?? true;
}

function isBodyReplayable(body: RequestBodyType | undefined | null): boolean {
  if (body === undefined || body === null || typeof body !== "object") return true;
  const candidate = body as { pipe?: unknown; getReader?: unknown };
  // Node streams have pipe(); web streams have getReader().
  return typeof candidate.pipe !== "function" && typeof candidate.getReader !== "function";
}
