import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { delay } from "@azure/core-util";
import { isRetriableClass } from "../classification/outcomeClass.js";
import { isCircuitOpenError } from "../errors/circuitOpenError.js";
import { logger } from "../logging/logger.js";
import { parseRetryAfterInMs } from "../timing/retryAfter.js";
import {
  bodyText,
  describeTableWrite,
  isAppliedAnswer,
  isUnknownOutcome,
  isWriteMethod,
  type AmbiguousWriteResult,
  type TableWrite,
} from "./ambiguousWrite.js";
import { readBackAmbiguousWrite } from "./ambiguousWriteReadBack.js";
import type { AttemptResult } from "./attemptGate.js";
import { isReplayable } from "./replayableBody.js";
import type { AttemptClass, DelaySource, RetryObserver, StopReason } from "./retryEvents.js";
import { startRetryInfo, type RetryInfo } from "./retryInfo.js";
import {
  DAY_IN_MS,
  resolveRetryPolicyOptions,
  type AmbiguousWriteOptions,
  type ResilientRetryPolicyOptions,
  type RetryPolicySettings,
} from "./retryPolicyOptions.js";
import { runAttempt } from "./runAttempt.js";

/** The policy's name; unique in a pipeline, so users can find and remove it. */
export const resilientRetryPolicyName = "resilientRetryPolicy";

/** Floor under a circuit wait, so a breaker that answers 0 cannot make us spin. */
const MIN_CIRCUIT_WAIT_IN_MS = 10;
/**
 * Circuit waits are drawn from [t, (1 + spread) t]. Measured with the demo (a hot partition
 * offline 7 s, then throttled at its target): synchronised waiters came back as one herd,
 * were throttled again and emptied the retry budget; spreading them halved the failures.
 */
const CIRCUIT_WAIT_SPREAD = 1;

/**
 * A Retry-phase policy that classifies every attempt, retries the retriable ones with the
 * chosen backoff (honouring server hints, the deadline and the caller's abort signal) and,
 * when it gives up, returns or throws exactly what the last attempt produced.
 */
export function resilientRetryPolicy(options: ResilientRetryPolicyOptions = {}): PipelinePolicy {
  const settings = resolveRetryPolicyOptions(options);
  return {
    name: resilientRetryPolicyName,
    sendRequest: (request, next) => sendWithRetries(request, next, settings),
  };
}

/** The one I/O loop: attempt, classify, decide, wait, again. */
async function sendWithRetries(request: PipelineRequest, next: SendRequest, s: RetryPolicySettings): Promise<PipelineResponse> {
  const started = performance.now();
  const deadline = started + s.maxElapsedInMs;
  const info = startRetryInfo(request);
  const replayable = isReplayable(request);
  const write = isWriteMethod(request.method);
  s.budget?.recordRequest();
  const attempt = (): Promise<AttemptResult> => {
    const now = performance.now();
    const remaining = deadline - now;
    const tryTimeout = s.tryTimeoutInMs > 0 ? s.tryTimeoutInMs : Infinity;
    const reason = remaining < tryTimeout ? "maxElapsedInMs" : "tryTimeoutInMs";
    return runAttempt(request, next, { inMs: Math.max(0, Math.min(tryTimeout, remaining)), reason, now, deadlines: s.deadlines }, s.rules);
  };
  let retryNumber = 0;
  let last: AttemptResult | undefined;
  let tableWrite: TableWrite | undefined | null = null;
  // Parsed at most once, and only for a write that had an unknown outcome.
  const describeWrite = (): TableWrite | undefined => (tableWrite ??= describeTableWrite(request, bodyText(request)));

  const finish = (
    result: AttemptResult | undefined,
    finalClass: AttemptClass,
    stopReason: StopReason,
    error?: unknown,
    resolution?: AmbiguousWriteResult,
  ) => {
    info.stopReason = stopReason;
    info.elapsedInMs = performance.now() - started;
    s.endOperation?.(request);
    if (write && info.unknownOutcomes > 0) noteAmbiguity(s, info, request, describeWrite(), stopReason, resolution);
    if (stopReason !== "success" && stopReason !== "permanent") {
      logger.warning(`Gave up after ${info.attempts} attempt(s): ${stopReason} (last: ${finalClass}).`);
    }
    notify(s.observers, "onOperationEnd", {
      request,
      response: result?.response,
      error: error ?? result?.error,
      attempts: info.attempts,
      finalClass,
      stopReason,
      elapsedInMs: info.elapsedInMs,
    });
    return surface(result, error);
  };

  for (;;) {
    if (request.abortSignal?.aborted) {
      return finish(undefined, "aborted", "aborted", new AbortError("The operation was aborted."));
    }
    const attemptStarted = performance.now();
    let result: AttemptResult;
    try {
      result = s.gate ? await s.gate.run(request, attempt) : await attempt();
    } catch (error) {
      if (!isCircuitOpenError(error)) throw error;
      recordAttempt(s, info, request, "circuit_open", attemptStarted, undefined);
      const wait = Math.max(MIN_CIRCUIT_WAIT_IN_MS, error.retryAfterInMs) * (1 + CIRCUIT_WAIT_SPREAD * s.random());
      if (!s.gate?.waitWhenOpen || performance.now() + wait > deadline) {
        // With a real failure already in hand, surface that: callers keep their statusCode checks.
        return last ? finish(last, "circuit_open", "circuit-open") : finish(undefined, "circuit_open", "circuit-open", error);
      }
      // Waiting for the probe is not a retry: nothing reached the network, and no budget is spent.
      try {
        await sleep(s, request, info.attempts, "circuit_open", wait, "circuit");
      } catch (abort) {
        return last ? finish(last, "aborted", "aborted", abort) : finish(undefined, "aborted", "aborted", abort);
      }
      continue;
    }
    last = result;
    const cls = result.outcomeClass;
    recordAttempt(s, info, request, cls, attemptStarted, result);
    if (write && isUnknownOutcome(result)) info.unknownOutcomes += 1;
    if (cls === "success") return finish(result, cls, "success");
    if (cls === "aborted") return finish(result, cls, "aborted");
    if (!isRetriableClass(cls)) {
      if (s.ambiguousWrites && write && info.unknownOutcomes > 0) {
        const described = describeWrite();
        if (described !== undefined && isAppliedAnswer(described, result)) {
          return settleAmbiguousWrite(s.ambiguousWrites, request, described, result, deadline, finish);
        }
      }
      return finish(result, cls, "permanent");
    }
    if (!replayable) {
      logger.warning("Not retrying: the request body is a stream that the first attempt consumed; pass a stream factory to make it retriable.");
      return finish(result, cls, "body-not-replayable");
    }
    if (retryNumber >= s.strategy.maxRetries) return finish(result, cls, "retries-exhausted");
    retryNumber += 1;
    const { delayInMs, source } = retryDelay(s, retryNumber, result);
    if (performance.now() + delayInMs >= deadline) return finish(result, cls, "deadline");
    if (s.budget !== undefined && !s.budget.tryRetry()) return finish(result, cls, "budget-exhausted");
    releaseBody(result);
    try {
      await sleep(s, request, info.attempts, cls, delayInMs, source);
    } catch (error) {
      return finish(result, "aborted", "aborted", error);
    }
  }
}

type Finish = (
  result: AttemptResult | undefined,
  finalClass: AttemptClass,
  stopReason: StopReason,
  error?: unknown,
  resolution?: AmbiguousWriteResult,
) => PipelineResponse;

/**
 * A retry answered what an earlier, unknown attempt's success would cause (409 after an
 * insert, 404 after a delete, 412 after a conditional update): read the entity back. The
 * same as sent: the write succeeded, report success. Otherwise the error surfaces as it
 * is, marked possibly applied.
 */
async function settleAmbiguousWrite(
  options: Required<AmbiguousWriteOptions>,
  request: PipelineRequest,
  write: TableWrite,
  result: AttemptResult,
  deadline: number,
  finish: Finish,
): Promise<PipelineResponse> {
  const timeoutInMs = Math.min(options.readBackTimeoutInMs, deadline - performance.now());
  const outcome = await readBackAmbiguousWrite(request, write, bodyText(request), timeoutInMs);
  logger.info(`An ambiguous ${write.operation} was read back: ${outcome.result}.`);
  if (outcome.result === "applied" && outcome.response !== undefined) {
    const response = outcome.response;
    return finish({ response, status: response.status, outcomeClass: "success" }, "success", "success", undefined, "applied");
  }
  return finish(result, result.outcomeClass, "permanent", undefined, outcome.result);
}

/** Marks a write that ended after an unknown outcome, and tells the observers. */
function noteAmbiguity(
  s: RetryPolicySettings,
  info: RetryInfo,
  request: PipelineRequest,
  write: TableWrite | undefined,
  stopReason: StopReason,
  resolution: AmbiguousWriteResult | undefined,
): void {
  // A batch's HTTP success can hide a failed sub-request (the SDK throws after reading the body).
  const result = resolution ?? (write?.kind === "batch" ? "not_resolvable" : stopReason === "success" ? undefined : "unresolved");
  if (result === undefined) return;
  info.ambiguousWrite = result;
  info.possiblyApplied = result !== "applied";
  notify(s.observers, "onAmbiguousWrite", { request, operation: write?.operation ?? "other", result, unknownOutcomes: info.unknownOutcomes });
}

function recordAttempt(
  s: RetryPolicySettings,
  info: RetryInfo,
  request: PipelineRequest,
  attemptClass: AttemptClass,
  attemptStarted: number,
  result: AttemptResult | undefined,
): void {
  info.attempts += 1;
  info.classes.push(attemptClass);
  if (s.observers.length === 0) return;
  notify(s.observers, "onAttempt", {
    request,
    attempt: info.attempts,
    attemptClass,
    status: result?.status,
    errorCode: result?.errorCode,
    durationInMs: performance.now() - attemptStarted,
  });
}

/** The strategy's delay, or the server's hint when longer (capped by maxRetryAfterInMs). */
function retryDelay(s: RetryPolicySettings, retryNumber: number, result: AttemptResult): { delayInMs: number; source: DelaySource } {
  const computed = sanitizeDelay(s.strategy.delayInMs(retryNumber), s.strategy.maxDelayInMs);
  const headers = result.response?.headers ?? (result.error as { response?: PipelineResponse } | undefined)?.response?.headers;
  const hint = headers ? parseRetryAfterInMs(headers) : undefined;
  if (hint === undefined) return { delayInMs: computed, source: "backoff" };
  const capped = Math.min(hint, s.maxRetryAfterInMs);
  return capped > computed ? { delayInMs: capped, source: "retry-after" } : { delayInMs: computed, source: "backoff" };
}

/** A user strategy's answer, made safe to wait on: NaN or negative waits the cap's worth or nothing, and no wait passes a day. */
function sanitizeDelay(delayInMs: number, maxDelayInMs: number): number {
  if (typeof delayInMs !== "number" || Number.isNaN(delayInMs)) return Math.min(maxDelayInMs, DAY_IN_MS);
  return Math.min(Math.max(0, delayInMs), DAY_IN_MS);
}

async function sleep(
  s: RetryPolicySettings,
  request: PipelineRequest,
  attempt: number,
  reason: AttemptClass,
  delayInMs: number,
  delaySource: DelaySource,
): Promise<void> {
  // Verbose: at info the retry log observer (added by installResilience) writes the fuller line.
  if (logger.verbose.enabled) logger.verbose(`Retrying after attempt ${attempt} (${reason}) in ${Math.round(delayInMs)} ms (${delaySource}).`);
  notify(s.observers, "onRetry", { request, attempt, reason, delayInMs, delaySource });
  await delay(delayInMs, { abortSignal: request.abortSignal, abortErrorMsg: "The operation was aborted." });
}

/** A streamed error body we will not read would hold its socket: drain it. */
function releaseBody(result: AttemptResult): void {
  result.response?.readableStreamBody?.resume();
}

/** Returns or throws exactly what the SDK would have seen from the last attempt. */
function surface(result: AttemptResult | undefined, error?: unknown): PipelineResponse {
  if (error !== undefined) throw error;
  if (result?.response) return result.response;
  throw result?.error;
}

function notify<K extends keyof RetryObserver>(
  observers: readonly RetryObserver[],
  hook: K,
  event: Parameters<NonNullable<RetryObserver[K]>>[0],
): void {
  for (const observer of observers) {
    try {
      (observer[hook] as ((e: typeof event) => void) | undefined)?.call(observer, event);
    } catch (error) {
      logger.warning(`A retry observer's ${hook} threw and was ignored: ${(error as Error)?.name ?? "error"}`);
    }
  }
}
