import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { delay } from "@azure/core-util";
import { isRetriableClass } from "../classification/outcomeClass.js";
import { validateClassificationRules, type ClassificationRules } from "../classification/classificationRules.js";
import { createRetryStrategy, type RetryStrategyConfig } from "../backoff/createRetryStrategy.js";
import { exponentialBackoff } from "../backoff/exponentialBackoff.js";
import type { RetryStrategy } from "../backoff/retryStrategy.js";
import { isCircuitOpenError } from "../errors/circuitOpenError.js";
import { logger } from "../logging/logger.js";
import { parseRetryAfterInMs } from "../timing/retryAfter.js";
import { optionalNumberOption, rejectUnknownKeys, validateObjectOption } from "../validation/validateNumberOption.js";
import type { AttemptGate, AttemptResult } from "./attemptGate.js";
import { isReplayable } from "./replayableBody.js";
import type { AttemptClass, DelaySource, RetryObserver, StopReason } from "./retryEvents.js";
import { startRetryInfo, type RetryInfo } from "./retryInfo.js";
import { runAttempt } from "./runAttempt.js";

/** The policy's name; unique in a pipeline, so users can find and remove it. */
export const resilientRetryPolicyName = "resilientRetryPolicy";

/** Options of {@link resilientRetryPolicy}. Every one is optional. */
export interface ResilientRetryPolicyOptions {
  /** The backoff strategy, as an object or by name. Defaults to `exponentialBackoff()`. */
  retry?: RetryStrategy | RetryStrategyConfig;
  /** Overall deadline for an operation, retries and waits included. `Infinity` for none. Defaults to 60000. */
  maxElapsedInMs?: number;
  /** Client-side timeout per attempt; a timed-out attempt is classified `timeout` and retried. 0 for none. Defaults to 0. */
  tryTimeoutInMs?: number;
  /** Longest server-requested wait (`Retry-After` and friends) honoured. Defaults to the strategy's `maxDelayInMs`. */
  maxRetryAfterInMs?: number;
  /** Extends or overrides the classification table. */
  classification?: ClassificationRules;
  /** Hooks on every attempt, retry and operation end (metrics, logging, your own). */
  observers?: readonly RetryObserver[];
  /** Decides whether an attempt may go out (the per-partition circuit breaker). */
  gate?: AttemptGate;
}

/** Defaults of {@link resilientRetryPolicy} beyond the strategy's own. */
export const DEFAULT_RETRY_POLICY_OPTIONS = Object.freeze({
  maxElapsedInMs: 60_000,
  tryTimeoutInMs: 0,
});

const KNOWN_KEYS = ["retry", "maxElapsedInMs", "tryTimeoutInMs", "maxRetryAfterInMs", "classification", "observers", "gate"];
const DAY_IN_MS = 24 * 3600_000;
/** Floor under a circuit wait, so a breaker that answers 0 cannot make us spin. */
const MIN_CIRCUIT_WAIT_IN_MS = 10;

/**
 * A Retry-phase policy that classifies every attempt, retries the retriable ones with the
 * chosen backoff (honouring server hints, the deadline and the caller's abort signal) and,
 * when it gives up, returns or throws exactly what the last attempt produced.
 */
export function resilientRetryPolicy(options: ResilientRetryPolicyOptions = {}): PipelinePolicy {
  const settings = resolveOptions(options);
  return {
    name: resilientRetryPolicyName,
    sendRequest: (request, next) => sendWithRetries(request, next, settings),
  };
}

interface Settings {
  strategy: RetryStrategy;
  maxElapsedInMs: number;
  tryTimeoutInMs: number;
  maxRetryAfterInMs: number;
  rules: ClassificationRules | undefined;
  observers: readonly RetryObserver[];
  gate: AttemptGate | undefined;
}

function resolveOptions(options: ResilientRetryPolicyOptions): Settings {
  validateObjectOption("options", options);
  rejectUnknownKeys("resilientRetryPolicy options", options, KNOWN_KEYS);
  const strategy = options.retry === undefined ? exponentialBackoff() : createRetryStrategy(options.retry);
  const maxElapsedInMs = optionalNumberOption(
    "maxElapsedInMs",
    options.maxElapsedInMs,
    DEFAULT_RETRY_POLICY_OPTIONS.maxElapsedInMs,
    { min: 1, max: DAY_IN_MS, allowInfinity: true },
  );
  const tryTimeoutInMs = optionalNumberOption(
    "tryTimeoutInMs",
    options.tryTimeoutInMs,
    DEFAULT_RETRY_POLICY_OPTIONS.tryTimeoutInMs,
    { max: DAY_IN_MS },
  );
  const maxRetryAfterInMs = optionalNumberOption("maxRetryAfterInMs", options.maxRetryAfterInMs, strategy.maxDelayInMs, {
    max: DAY_IN_MS,
  });
  const rules =
    options.classification === undefined ? undefined : validateClassificationRules("classification", options.classification);
  const observers = options.observers ?? [];
  if (!Array.isArray(observers)) throw new TypeError("observers must be an array of RetryObserver objects.");
  if (options.gate !== undefined && typeof options.gate?.run !== "function") {
    throw new TypeError("gate must have a run(request, attempt) method.");
  }
  return { strategy, maxElapsedInMs, tryTimeoutInMs, maxRetryAfterInMs, rules, observers, gate: options.gate };
}

/** The one I/O loop: attempt, classify, decide, wait, again. */
async function sendWithRetries(request: PipelineRequest, next: SendRequest, s: Settings): Promise<PipelineResponse> {
  const started = performance.now();
  const deadline = started + s.maxElapsedInMs;
  const info = startRetryInfo(request);
  const replayable = isReplayable(request);
  const attempt = (): Promise<AttemptResult> => {
    const remaining = deadline - performance.now();
    const tryTimeout = s.tryTimeoutInMs > 0 ? s.tryTimeoutInMs : Infinity;
    const reason = remaining < tryTimeout ? "maxElapsedInMs" : "tryTimeoutInMs";
    return runAttempt(request, next, Math.max(0, Math.min(tryTimeout, remaining)), reason, s.rules);
  };
  let retryNumber = 0;
  let last: AttemptResult | undefined;

  const finish = (result: AttemptResult | undefined, finalClass: AttemptClass, stopReason: StopReason, error?: unknown) => {
    info.stopReason = stopReason;
    info.elapsedInMs = performance.now() - started;
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
      const wait = Math.max(MIN_CIRCUIT_WAIT_IN_MS, error.retryAfterInMs);
      if (!s.gate?.waitWhenOpen || performance.now() + wait > deadline) {
        // With a real failure already in hand, surface that: callers keep their statusCode checks.
        return last ? finish(last, "circuit_open", "circuit-open") : finish(undefined, "circuit_open", "circuit-open", error);
      }
      // Waiting for the probe is not a retry: nothing reached the network.
      await sleep(s, request, info.attempts, "circuit_open", wait, "circuit");
      continue;
    }
    last = result;
    const cls = result.outcomeClass;
    recordAttempt(s, info, request, cls, attemptStarted, result);
    if (cls === "success") return finish(result, cls, "success");
    if (cls === "aborted") return finish(result, cls, "aborted");
    if (!isRetriableClass(cls)) return finish(result, cls, "permanent");
    if (!replayable) {
      logger.warning("Not retrying: the request body is a stream that the first attempt consumed; pass a stream factory to make it retriable.");
      return finish(result, cls, "body-not-replayable");
    }
    if (retryNumber >= s.strategy.maxRetries) return finish(result, cls, "retries-exhausted");
    retryNumber += 1;
    const { delayInMs, source } = retryDelay(s, retryNumber, result);
    if (performance.now() + delayInMs >= deadline) return finish(result, cls, "deadline");
    releaseBody(result);
    try {
      await sleep(s, request, info.attempts, cls, delayInMs, source);
    } catch (error) {
      return finish(result, "aborted", "aborted", error);
    }
  }
}

function recordAttempt(
  s: Settings,
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
function retryDelay(s: Settings, retryNumber: number, result: AttemptResult): { delayInMs: number; source: DelaySource } {
  const computed = s.strategy.delayInMs(retryNumber);
  const headers = result.response?.headers ?? (result.error as { response?: PipelineResponse } | undefined)?.response?.headers;
  const hint = headers ? parseRetryAfterInMs(headers) : undefined;
  if (hint === undefined) return { delayInMs: computed, source: "backoff" };
  const capped = Math.min(hint, s.maxRetryAfterInMs);
  return capped > computed ? { delayInMs: capped, source: "retry-after" } : { delayInMs: computed, source: "backoff" };
}

async function sleep(
  s: Settings,
  request: PipelineRequest,
  attempt: number,
  reason: AttemptClass,
  delayInMs: number,
  delaySource: DelaySource,
): Promise<void> {
  logger.info(`Retrying after attempt ${attempt} (${reason}) in ${Math.round(delayInMs)} ms (${delaySource}).`);
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
