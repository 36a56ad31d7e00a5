// One attempt, in the four steps the retry loop writes out: startAttempt, await next, answered
// or failed, endAttempt. With a finite timeout the attempt gets its own abort signal, linked to
// the caller's; when it passes, the attempt is reported as a RestError ETIMEDOUT (class
// `timeout`, retried), unlike the SDK's `request.timeout`, whose AbortError is not retried (and
// whose timer the SDK's Node client leaves running when a request fails).
import { RestError, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import type { AbortSignalLike } from "@azure/abort-controller";
import { classify } from "../classification/classify.js";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { ArmedDeadline, AttemptDeadlines } from "../timing/attemptDeadlines.js";
import { isWriteMethod } from "../address/requestMethod.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { readChangesetFailure } from "../classification/changesetFailure.js";
import type { RequestAddress } from "../address/requestAddress.js";
import { parseRetryAfterInMs } from "../timing/retryAfter.js";
import { attachRequestToError, setAttemptSignal } from "../address/requestMarks.js";

/** The server's retry hint of a failed attempt (its own, or its response's headers), capped at `maxInMs`. */
export function retryAfterOf(result: AttemptResult, maxInMs: number): number | undefined {
  const headers = result.response?.headers ?? (result.error as { response?: PipelineResponse } | undefined)?.response?.headers;
  const hint = result.retryAfterInMs ?? (headers === undefined ? undefined : parseRetryAfterInMs(headers));
  return hint === undefined ? undefined : Math.min(hint, maxInMs);
}

/** An attempt's timeout while it runs: what {@link endAttempt} undoes. */
export interface ArmedAttempt {
  /** Milliseconds the attempt may take. */
  readonly inMs: number;
  /** The option that set it: `tryTimeoutInMs`, or `maxElapsedInMs` when less time than that was left. */
  readonly reason: string;
  readonly deadlines: AttemptDeadlines;
  /** The caller's own signal, put back on the request when the attempt ends. */
  readonly callerSignal: AbortSignalLike | undefined;
  readonly deadline: ArmedDeadline;
  readonly forwardAbort: (() => void) | undefined;
  /** The attempt's own controller, whose signal the request carries while it runs. */
  readonly controller: AbortController;
}

/**
 * Arms the timeout of an attempt starting at `now`, when finite, by giving the request a
 * signal of its own; undefined otherwise. The timeout is `tryTimeoutInMs` (0 for none), or
 * less when `deadline` (the operation's, less what must stay in reserve) comes first.
 */
export function startAttempt(request: PipelineRequest, deadline: number, tryTimeoutInMs: number, now: number, deadlines: AttemptDeadlines): ArmedAttempt | undefined {
  const remaining = deadline - now;
  const tryTimeout = tryTimeoutInMs > 0 ? tryTimeoutInMs : Infinity;
  if (!Number.isFinite(tryTimeout) && !Number.isFinite(remaining)) return undefined;
  const reason = remaining < tryTimeout ? "maxElapsedInMs" : "tryTimeoutInMs";
  const inMs = Math.max(0, Math.min(tryTimeout, remaining));
  const callerSignal = request.abortSignal;
  const controller = new AbortController();
  let forwardAbort: (() => void) | undefined;
  if (callerSignal !== undefined) {
    forwardAbort = () => controller.abort();
    callerSignal.addEventListener("abort", forwardAbort, { once: true });
  }
  const armed = deadlines.arm(controller, now, inMs);
  setAttemptSignal(request, controller.signal);
  return { inMs, reason, deadlines, callerSignal, deadline: armed, forwardAbort, controller };
}

/** The attempt is over: its deadline no longer matters, and the request has the caller's signal back. */
export function endAttempt(request: PipelineRequest, armed: ArmedAttempt, body: NodeJS.ReadableStream | undefined): void {
  armed.deadlines.release(armed.deadline);
  setAttemptSignal(request, armed.callerSignal);
  const { forwardAbort, callerSignal } = armed;
  if (forwardAbort === undefined || callerSignal === undefined) return;
  callerSignal.removeEventListener("abort", forwardAbort);
  // A streamed body (a blob download) is read after we return, on the attempt's signal: the
  // caller's abort must still reach it until the body is done with.
  const stream = body as (NodeJS.ReadableStream & { destroyed?: boolean; closed?: boolean }) | undefined;
  if (stream === undefined || stream.destroyed === true || stream.closed === true || callerSignal.aborted) return;
  forwardAbortToBody(callerSignal, armed.controller, stream);
}

/** Each streamed body's attempt controller: alive exactly as long as the body is. */
const bodyControllers = new WeakMap<object, AbortController>();
/** Removes the forwarding of a body dropped without being closed, once it is collected. */
const droppedBodies = new FinalizationRegistry<() => void>((stopForwarding) => stopForwarding());

/**
 * Forwards the caller's abort to the attempt's controller while `stream` lives, and no longer:
 * until it closes, or, for a body never read nor closed, until it is garbage collected. The
 * listener reaches the controller through a weak reference and the body holds the controller,
 * so a dropped body does not stay reachable from a caller's long-lived signal (one listener
 * per download, for the signal's life, otherwise).
 */
function forwardAbortToBody(callerSignal: AbortSignalLike, controller: AbortController, stream: NodeJS.ReadableStream): void {
  const stopForwarding = forwardWeakly(callerSignal, controller);
  bodyControllers.set(stream, controller);
  droppedBodies.register(stream, stopForwarding, stream);
  stream.once("close", () => {
    droppedBodies.unregister(stream);
    stopForwarding();
  });
}

/**
 * Adds the caller's listener and returns its removal. A function of its own because V8 gives
 * the closures of one scope one shared context: made beside the body's "close" listener, they
 * would hold the body, and the caller's signal would keep every dropped body alive.
 */
function forwardWeakly(callerSignal: AbortSignalLike, controller: AbortController): () => void {
  const target = new WeakRef(controller);
  const forward = (): void => target.deref()?.abort();
  callerSignal.addEventListener("abort", forward, { once: true });
  return () => callerSignal.removeEventListener("abort", forward);
}

/**
 * The result of an attempt that got a response. With the operation's `address`, a Tables
 * `$batch` answered 202 is classified by its failed changeset, if it has one.
 */
export function answered(response: PipelineResponse, rules: ClassificationRules | undefined, address?: RequestAddress): AttemptResult {
  if (isUnreadableWriteAnswer(response)) {
    return { response, status: response.status, outcomeClass: classify({ status: response.status }, rules), unreadableBody: true };
  }
  if (response.status === 202 && address !== undefined) {
    const changeset = failedChangeset(response, address, rules);
    if (changeset !== undefined) return changeset;
  }
  const errorCode = response.headers.get("x-ms-error-code") ?? undefined;
  return { response, status: response.status, errorCode, outcomeClass: classify({ status: response.status, errorCode }, rules) };
}

/**
 * A write answered 2xx with a JSON body that does not parse (`AttemptResult.unreadableBody`):
 * decideNext settles it by reading the entity back where that can, and never sends it again. Reads
 * are left to the SDK (nothing to settle); most writes carry no body (`Prefer: return-no-content`),
 * so this parses only the rare one that does.
 */
function isUnreadableWriteAnswer(response: PipelineResponse): boolean {
  const text = response.bodyAsText;
  if (!text || response.status < 200 || response.status > 299 || !isWriteMethod(response.request.method)) return false;
  if (!(response.headers.get("content-type") ?? "").includes("json")) return false;
  try {
    JSON.parse(text);
    return false;
  } catch {
    return true;
  }
}

/** The result of an attempt that threw: aborted by the caller, timed out by us, or failed (with the error's response, if any). */
export function failed(
  request: PipelineRequest,
  thrown: unknown,
  callerSignal: AbortSignalLike | undefined,
  armed: ArmedAttempt | undefined,
  rules: ClassificationRules | undefined,
): AttemptResult {
  if (callerSignal?.aborted) return { error: thrown, outcomeClass: "aborted" };
  if (armed?.deadline.timedOut) {
    const { inMs, reason } = armed;
    const error = new RestError(`The attempt timed out on the client after ${Math.round(inMs)} ms (${reason}).`, { code: "ETIMEDOUT", request });
    return { error, outcomeClass: classify({ error }, rules) };
  }
  const response = (thrown as { response?: { headers?: { get(name: string): string | undefined } } }).response;
  const errorCode = response?.headers?.get?.("x-ms-error-code") ?? undefined;
  attachRequestToError(thrown, request);
  return { error: thrown, errorCode, outcomeClass: classify({ error: thrown, errorCode }, rules) };
}

/**
 * A Tables entity group transaction (`POST $batch`) answered 202 Accepted whose changeset
 * failed: the attempt, classified by the changeset's status and error code as if they were
 * the answer's (503 ServerBusy `throttled`, 500 OperationTimedOut `timeout`, 409 `permanent`),
 * with the changeset's own retry hint. Azure answers 202 "even if one of the operations in
 * the change set fails", and a changeset is atomic: a failed one applied nothing, so the
 * whole batch may be sent again (docs/retry.md, "Tables transactions").
 *
 * Undefined for every other answer, so they are classified as before. Only a Tables `$batch`
 * answered 202 with a multipart body is read (at most `MAX_BATCH_SCAN_CHARS`): any other
 * request costs two comparisons.
 */
function failedChangeset(
  response: PipelineResponse,
  address: RequestAddress,
  rules: ClassificationRules | undefined,
): AttemptResult | undefined {
  if (response.status !== 202 || address.service !== "table" || address.operation !== "batch") return undefined;
  const text = response.bodyAsText;
  if (!text || !(response.headers.get("content-type") ?? "").toLowerCase().startsWith("multipart/mixed")) return undefined;
  const failure = readChangesetFailure(text);
  if (failure === undefined) return undefined;
  const { status, errorCode, retryAfterInMs } = failure;
  return { response, status, errorCode, retryAfterInMs, inChangeset: true, outcomeClass: classify({ status, errorCode }, rules) };
}
