import { RestError, type PipelineRequest, type SendRequest } from "@azure/core-rest-pipeline";
import { classify } from "../classification/classify.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { ArmedDeadline, AttemptDeadlines } from "../timing/attemptDeadlines.js";
import type { AttemptResult } from "./attemptGate.js";

/** How long one attempt may take, and why that long. */
export interface AttemptTimeout {
  /** Milliseconds; `Infinity` for no limit. */
  inMs: number;
  /** The option that set it: `tryTimeoutInMs`, or `maxElapsedInMs` when less time than that is left. */
  reason: string;
  /** When the attempt starts (`performance.now()`). */
  now: number;
  deadlines: AttemptDeadlines;
}

/**
 * Sends one attempt and classifies it. With a finite timeout the attempt gets its own
 * abort signal, linked to the caller's; when the timeout passes, the attempt is reported
 * as a `RestError` with code `ETIMEDOUT` (class `timeout`, retried), unlike the SDK's
 * `request.timeout`, whose AbortError is not retried (and whose timer the SDK's Node
 * client leaves running when a request fails, holding the process open until it fires).
 */
export async function runAttempt(
  request: PipelineRequest,
  next: SendRequest,
  timeout: AttemptTimeout,
  rules: ClassificationRules | undefined,
): Promise<AttemptResult> {
  // One async function, not two: on the success path every awaited layer costs a promise and a microtask.
  const callerSignal = request.abortSignal;
  let deadline: ArmedDeadline | undefined;
  let forwardAbort: (() => void) | undefined;
  if (Number.isFinite(timeout.inMs)) {
    const controller = new AbortController();
    if (callerSignal !== undefined) {
      forwardAbort = () => controller.abort();
      callerSignal.addEventListener("abort", forwardAbort, { once: true });
    }
    deadline = timeout.deadlines.arm(controller, timeout.now, timeout.inMs);
    request.abortSignal = controller.signal;
  }
  try {
    const response = await next(request);
    const errorCode = response.headers.get("x-ms-error-code") ?? undefined;
    return { response, status: response.status, errorCode, outcomeClass: classify({ status: response.status, errorCode }, rules) };
  } catch (thrown) {
    if (callerSignal?.aborted) return { error: thrown, outcomeClass: "aborted" };
    if (deadline?.timedOut) {
      const error = new RestError(`The attempt timed out on the client after ${Math.round(timeout.inMs)} ms (${timeout.reason}).`, {
        code: "ETIMEDOUT",
        request,
      });
      return { error, outcomeClass: classify({ error }, rules) };
    }
    const response = (thrown as { response?: { headers?: { get(name: string): string | undefined } } }).response;
    const errorCode = response?.headers?.get?.("x-ms-error-code") ?? undefined;
    return { error: thrown, errorCode, outcomeClass: classify({ error: thrown, errorCode }, rules) };
  } finally {
    if (deadline !== undefined) {
      timeout.deadlines.release(deadline);
      if (forwardAbort !== undefined) callerSignal?.removeEventListener("abort", forwardAbort);
      request.abortSignal = callerSignal;
    }
  }
}
