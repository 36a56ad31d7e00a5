import type { PipelineRequest } from "@azure/core-rest-pipeline";

/** The request body as text, when it is text (the SDK sends Tables JSON as a string). */
export function bodyText(request: PipelineRequest): string | undefined {
  const body = request.body;
  if (typeof body === "string") return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8");
  return undefined;
}
