import {
  createHttpHeaders,
  createPipelineRequest,
  type PipelinePolicy,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { logger } from "../logging/logger.js";
import { safeErrorName } from "../logging/safeErrorCode.js";
import { isWriteMethod } from "../address/requestMethod.js";
import { readBackCanSettle } from "./writeOutcome.js";
import { decideInsertReadBack, readBackRefusal, type ReadBackOutcome } from "./readBackDecision.js";
import { entityUrl, type TableWrite } from "../address/tableWrite.js";
import { createReadBackRoutes, setReadBackRoutes, type ReadBackRoute, type ReadBackRoutes } from "./readBackRoutes.js";

/**
 * Ends a read-back's client request id (`x-ms-client-request-id`), which is the id of the
 * write it settles followed by this suffix: storage logs (and a test's request log) tie the
 * read-back to its write, and tell it from a read of the application's.
 */
export const READ_BACK_REQUEST_ID_SUFFIX = "-readback";

/** The read-back policy's name; unique in a pipeline. */
export const ambiguousWriteReadBackPolicyName = "ambiguousWriteReadBackPolicy";

/**
 * Makes read-backs possible. It must run before the credential policy (installResilience puts it
 * in the Serialize phase): Tables clients sign *before* the Retry phase, so a GET sent from the
 * retry policy with its `next` would go out unsigned. For each write it remembers its own `next`
 * (the rest of the client's pipeline: signing, the retry policy, the HttpClient) and the URL
 * before a SAS was appended. The retry policy given this policy (`ambiguousWrites: { readBackPolicy }`)
 * sends its read-back along that route, signed like any request of the client, never with the
 * write's signed headers. A hand-built pipeline makes one and gives it to both (`installResilience` does).
 *
 * @example
 * const readBackPolicy = ambiguousWriteReadBackPolicy();
 * pipeline.addPolicy(readBackPolicy, { phase: "Serialize" });
 * pipeline.addPolicy(resilientRetryPolicy({ ambiguousWrites: { readBackPolicy } }), { phase: "Retry" });
 */
export function ambiguousWriteReadBackPolicy(): PipelinePolicy {
  const routes = createReadBackRoutes();
  const policy: PipelinePolicy = {
    name: ambiguousWriteReadBackPolicyName,
    sendRequest(request, next) {
      if (isWriteMethod(request.method)) routes.remember(request, next);
      return next(request);
    },
  };
  setReadBackRoutes(policy, routes);
  return policy;
}

/**
 * Settles an ambiguous `write` whose retry got the answer its own success would cause
 * (`isAppliedAnswer`). Only an insert can be (see {@link readBackCanSettle}): its entity is read
 * back along the route `routes` remembered for it and compared with what was sent; any other
 * write is `not_resolvable` at once, and without a route nothing is read. Never throws: any
 * failure is `unresolved`, logged in our own words (an Add-only SAS cannot read, and says so).
 */
export async function readBackAmbiguousWrite(
  request: PipelineRequest,
  routes: ReadBackRoutes | undefined,
  write: TableWrite,
  sentBody: string | undefined,
  timeoutInMs: number,
): Promise<ReadBackOutcome> {
  if (!readBackCanSettle(write)) return { result: "not_resolvable" };
  const outcome = await readBack(request, routes?.routeOf(request), write, sentBody, timeoutInMs);
  if (outcome.result === "unresolved") {
    logger.info(`Read-back of an ambiguous ${write.operation}: ${outcome.reason ?? "not possible"}; the write stays unresolved.`);
  }
  return outcome;
}

async function readBack(
  request: PipelineRequest,
  route: ReadBackRoute | undefined,
  write: TableWrite,
  sentBody: string | undefined,
  timeoutInMs: number,
): Promise<ReadBackOutcome> {
  if (route === undefined) return { result: "unresolved", reason: "no read-back route: it needs ambiguousWriteReadBackPolicy() in the pipeline, and the same policy as ambiguousWrites.readBackPolicy" };
  if (write.partitionKey === undefined || write.rowKey === undefined || timeoutInMs < 1) return { result: "unresolved", reason: "no time or no keys to read" };
  let response: PipelineResponse;
  const controller = new AbortController();
  const onAbort = (): void => controller.abort();
  request.abortSignal?.addEventListener("abort", onAbort, { once: true });
  const timer = setTimeout(onAbort, timeoutInMs);
  timer.unref?.();
  try {
    if (request.abortSignal?.aborted) return { result: "unresolved", reason: "aborted by the caller" };
    const get = createPipelineRequest({
      url: entityUrl(route.url, write),
      method: "GET",
      requestId: `${request.requestId}${READ_BACK_REQUEST_ID_SUFFIX}`,
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
      // The write's call's span: the read-back's HTTP span shows under it, beside the write's attempts.
      tracingOptions: request.tracingOptions,
    });
    response = await route.next(get);
  } catch (error) {
    const status = (error as { statusCode?: unknown })?.statusCode;
    if (typeof status === "number" && status !== 404) return { result: "unresolved", reason: readBackRefusal(status) };
    if (status !== 404) return { result: "unresolved", reason: `the read-back failed (${safeErrorName(error)})` };
    response = { request, status: 404, headers: createHttpHeaders({}) };
  } finally {
    clearTimeout(timer);
    request.abortSignal?.removeEventListener("abort", onAbort);
  }
  response.readableStreamBody?.resume();
  return decideInsertReadBack(request, sentBody, response);
}
