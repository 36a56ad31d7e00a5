import { RestError, type PipelineRequest, type SendRequest } from "@azure/core-rest-pipeline";
import { classify } from "../classification/classify.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { AttemptDeadlines } from "../timing/attemptDeadlines.js";
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
  if (!Number.isFinite(timeout.inMs)) return classifyAttempt(request, next, rules);
  const callerSignal = request.abortSignal;
  const controller = new AbortController();
  const forwardAbort = (): void => controller.abort();
  callerSignal?.addEventListener("abort", forwardAbort, { once: true });
  const deadline = timeout.deadlines.arm(controller, timeout.now, timeout.inMs);
  request.abortSignal = controller.signal;
  try {
    const result = await classifyAttempt(request, next, rules);
    if (!deadline.timedOut || callerSignal?.aborted || result.response !== undefined) return result;
    const error = new RestError(`The attempt timed out on the client after ${Math.round(timeout.inMs)} ms (${timeout.reason}).`, {
      code: "ETIMEDOUT",
      request,
    });
    return { error, outcomeClass: classify({ error }, rules) };
  } finally {
    timeout.deadlines.release(deadline);
    callerSignal?.removeEventListener("abort", forwardAbort);
    request.abortSignal = callerSignal;
  }
}

async function classifyAttempt(request: PipelineRequest, next: SendRequest, rules: ClassificationRules | undefined): Promise<AttemptResult> {
  try {
    const response = await next(request);
    const errorCode = response.headers.get("x-ms-error-code") ?? undefined;
    return { response, status: response.status, errorCode, outcomeClass: classify({ status: response.status, errorCode }, rules) };
  } catch (error) {
    if (request.abortSignal?.aborted) return { error, outcomeClass: "aborted" };
    const response = (error as { response?: { headers?: { get(name: string): string | undefined } } }).response;
    const errorCode = response?.headers?.get?.("x-ms-error-code") ?? undefined;
    return { error, errorCode, outcomeClass: classify({ error, errorCode }, rules) };
  }
}
