import {
  createHttpHeaders,
  createPipelineRequest,
  type PipelinePolicy,
  type PipelineRequest,
  type PipelineResponse,
  type SendRequest,
} from "@azure/core-rest-pipeline";
import { logger } from "../logging/logger.js";
import { isWriteMethod, parseJsonObject, type AmbiguousWriteResult, type TableWrite } from "./ambiguousWrite.js";
import { entityMatches } from "./ambiguousWriteComparison.js";

/** The read-back policy's name; unique in a pipeline. */
export const ambiguousWriteReadBackPolicyName = "ambiguousWriteReadBackPolicy";

/** The rest of the pipeline as a write's first policy saw it, and the write's URL before signing. */
interface Continuation {
  next: SendRequest;
  url: string;
}

// Kept on the request under a symbol: gone with it, nothing to clean up, and cheaper on
// every write than a WeakMap entry (see retryInfo.ts).
const CONTINUATION: unique symbol = Symbol("azure-storage-resilience.readBackContinuation");

interface WithContinuation {
  [CONTINUATION]?: Continuation;
}

/**
 * Makes read-backs possible. It must run before the credential policy (installResilience
 * puts it in the Serialize phase): Tables clients sign in a policy that runs *before* the
 * Retry phase, so a GET made inside the retry policy and sent with its `next` would go out
 * unsigned. This policy remembers, for each write, its own `next`: the rest of the client's
 * pipeline (signing with the client's own credential, SAS or token, then the retry policy,
 * then the client's HttpClient) and the URL before a SAS was appended. The retry policy
 * sends its read-back GET through that continuation, so it is signed like any request of
 * the client, and never re-uses the write's signed headers for another method and URL.
 */
export function ambiguousWriteReadBackPolicy(): PipelinePolicy {
  return {
    name: ambiguousWriteReadBackPolicyName,
    sendRequest(request, next) {
      if (isWriteMethod(request.method)) (request as PipelineRequest & WithContinuation)[CONTINUATION] = { next, url: request.url };
      return next(request);
    },
  };
}

/** What a read-back decided. */
export interface ReadBackOutcome {
  result: Exclude<AmbiguousWriteResult, "not_resolvable">;
  /** With `applied`: the success response to return in place of the error. */
  response?: PipelineResponse;
}

/** Longest read-back body parsed: an entity is at most 1 MiB (4 MiB of JSON is plenty). */
const MAX_ENTITY_JSON_LENGTH = 4 * 1024 * 1024;

/**
 * Reads the entity of an ambiguous `write` back through the client's own pipeline and
 * compares it with what was sent. Never throws: any failure is `unresolved`.
 */
export async function readBackAmbiguousWrite(
  request: PipelineRequest,
  write: TableWrite,
  sentBody: string | undefined,
  timeoutInMs: number,
): Promise<ReadBackOutcome> {
  const continuation = (request as PipelineRequest & WithContinuation)[CONTINUATION];
  if (continuation === undefined || write.partitionKey === undefined || write.rowKey === undefined || timeoutInMs < 1) {
    return { result: "unresolved" };
  }
  let response: PipelineResponse;
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  request.abortSignal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(onAbort, timeoutInMs);
  timer.unref?.();
  try {
    if (request.abortSignal?.aborted) return { result: "unresolved" };
    const get = createPipelineRequest({
      url: entityUrl(continuation.url, write),
      method: "GET",
      headers: createHttpHeaders({
        accept: "application/json;odata=minimalmetadata",
        "x-ms-version": request.headers.get("x-ms-version") ?? "2019-02-02",
        dataserviceversion: "3.0",
      }),
      abortSignal: controller.signal,
      allowInsecureConnection: request.allowInsecureConnection,
      proxySettings: request.proxySettings,
      tlsSettings: request.tlsSettings,
      agent: request.agent,
    });
    response = await continuation.next(get);
  } catch (error) {
    const status = (error as { statusCode?: unknown })?.statusCode;
    if (status !== 404) {
      logger.info(`Read-back of an ambiguous ${write.operation} failed (${(error as Error)?.name ?? "error"}); the write stays unresolved.`);
      return { result: "unresolved" };
    }
    response = { request, status: 404, headers: createHttpHeaders({}) };
  } finally {
    clearTimeout(timer);
    request.abortSignal?.removeEventListener("abort", onAbort);
  }
  response.readableStreamBody?.resume();
  return decide(request, write, sentBody, response);
}

function decide(request: PipelineRequest, write: TableWrite, sentBody: string | undefined, found: PipelineResponse): ReadBackOutcome {
  if (write.kind === "delete") {
    if (found.status === 404) return { result: "applied", response: success(request, write, found, 204) };
    return { result: found.status === 200 ? "differs" : "unresolved" };
  }
  if (found.status === 404) return { result: "differs" };
  if (found.status !== 200) return { result: "unresolved" };
  const stored = parseJsonObject(found.bodyAsText ?? undefined, MAX_ENTITY_JSON_LENGTH);
  const sent = parseJsonObject(sentBody, MAX_ENTITY_JSON_LENGTH);
  if (stored === undefined || sent === undefined) return { result: "unresolved" };
  // An ETag that is still the one the update was conditional on: the update never landed.
  if (write.ifMatch !== undefined && etagOf(found, stored) === write.ifMatch) return { result: "differs" };
  if (!entityMatches(sent, stored, write.kind === "merge" ? "subset" : "exact")) return { result: "differs" };
  const preferNoContent = /return-no-content/i.test(request.headers.get("prefer") ?? "");
  const status = write.kind === "insert" && !preferNoContent ? 201 : 204;
  return { result: "applied", response: success(request, write, found, status) };
}

/**
 * The success the SDK would have got: 201 (with the entity) or 204, and the headers its
 * deserializers read (`etag`, `date`, `x-ms-request-id`, `x-ms-version`,
 * `x-ms-client-request-id`, `preference-applied`). The ETag is the stored entity's.
 */
function success(request: PipelineRequest, write: TableWrite, found: PipelineResponse, status: 201 | 204): PipelineResponse {
  const headers = createHttpHeaders({
    date: found.headers.get("date") ?? new Date().toUTCString(),
    "x-ms-version": found.headers.get("x-ms-version") ?? request.headers.get("x-ms-version") ?? "2019-02-02",
    "cache-control": "no-cache",
    "content-length": "0",
  });
  const copy = (name: string, value: string | undefined): void => {
    if (value !== undefined) headers.set(name, value);
  };
  copy("x-ms-request-id", found.headers.get("x-ms-request-id"));
  copy("x-ms-client-request-id", request.headers.get("x-ms-client-request-id"));
  if (write.kind !== "delete") copy("etag", etagOf(found, parseJsonObject(found.bodyAsText ?? undefined, MAX_ENTITY_JSON_LENGTH)));
  if (write.kind === "insert" && status === 204) headers.set("preference-applied", "return-no-content");
  if (status === 201 && found.bodyAsText) {
    headers.set("content-type", found.headers.get("content-type") ?? "application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
    headers.set("content-length", String(Buffer.byteLength(found.bodyAsText)));
    return { request, status, headers, bodyAsText: found.bodyAsText };
  }
  return { request, status, headers };
}

function etagOf(found: PipelineResponse, body: Record<string, unknown> | undefined): string | undefined {
  const fromBody = body?.["odata.etag"];
  return found.headers.get("etag") ?? (typeof fromBody === "string" ? fromBody : undefined);
}

/**
 * The entity's URL: the write's own for updates and deletes; for an insert, the table's URL
 * with the entity address appended (keys quoted and encoded the way @azure/data-tables
 * does). The query (a SAS in the client's URL, if any) is kept as it was before signing.
 */
export function entityUrl(writeUrl: string, write: TableWrite): string {
  if (write.kind !== "insert") return writeUrl;
  const url = new URL(writeUrl);
  const key = (value: string): string => encodeURIComponent(value.replace(/'/g, "''"));
  url.pathname = `${url.pathname.replace(/\/$/, "")}(PartitionKey='${key(write.partitionKey ?? "")}',RowKey='${key(write.rowKey ?? "")}')`;
  return url.toString();
}
