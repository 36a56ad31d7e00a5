import { RestError, type PipelineRequest, type SendRequest } from "@azure/core-rest-pipeline";
import { classify } from "../classification/classify.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { AttemptResult } from "./attemptGate.js";

/**
 * Sends one attempt and classifies it. With a finite `timeoutInMs` the attempt gets its
 * own abort signal, linked to the caller's; when our timer fires the attempt is reported
 * as a `RestError` with code `ETIMEDOUT` (class `timeout`, retried), unlike the SDK's
 * `request.timeout`, whose AbortError is not retried.
 */
export async function runAttempt(
  request: PipelineRequest,
  next: SendRequest,
  timeoutInMs: number,
  timeoutReason: string,
  rules: ClassificationRules | undefined,
): Promise<AttemptResult> {
  const callerSignal = request.abortSignal;
  let controller: AbortController | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const forwardAbort = (): void => controller?.abort();
  if (Number.isFinite(timeoutInMs)) {
    controller = new AbortController();
    callerSignal?.addEventListener("abort", forwardAbort, { once: true });
    timer = setTimeout(() => {
      timedOut = true;
      controller?.abort();
    }, timeoutInMs);
    timer.unref?.();
    request.abortSignal = controller.signal;
  }
  try {
    const response = await next(request);
    const errorCode = response.headers.get("x-ms-error-code") ?? undefined;
    return { response, status: response.status, errorCode, outcomeClass: classify({ status: response.status, errorCode }, rules) };
  } catch (thrown) {
    const error =
      timedOut && !callerSignal?.aborted
        ? new RestError(`The attempt timed out on the client after ${Math.round(timeoutInMs)} ms (${timeoutReason}).`, {
            code: "ETIMEDOUT",
            request,
          })
        : thrown;
    if (callerSignal?.aborted) return { error, outcomeClass: "aborted" };
    const response = (error as { response?: { headers?: { get(name: string): string | undefined } } }).response;
    const errorCode = response?.headers?.get?.("x-ms-error-code") ?? undefined;
    return { error, errorCode, outcomeClass: classify({ error, errorCode }, rules) };
  } finally {
    if (controller) {
      clearTimeout(timer);
      callerSignal?.removeEventListener("abort", forwardAbort);
      request.abortSignal = callerSignal;
    }
  }
}
