import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { delay } from "@azure/core-util";
import { isRetriableClass } from "../classification/outcomeClass.js";
import { isCircuitOpenError } from "../errors/circuitOpenError.js";
import { logger } from "../logging/logger.js";
import { parseRetryAfterInMs } from "../timing/retryAfter.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
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
import { isFirstTrySuccessRecorder, recordFirstTrySuccess } from "./firstTrySuccess.js";
import { isReplayable } from "./replayableBody.js";
import type {
  AmbiguousWriteEvent,
  AttemptClass,
  AttemptEvent,
  DelaySource,
  OperationEvent,
  RetryEvent,
  RetryObserver,
  StopReason,
} from "./retryEvents.js";
import { startRetryInfo, type RetryInfo } from "./retryInfo.js";
import {
  resolveRetryPolicyOptions,
  type AmbiguousWriteOptions,
  type ResilientRetryPolicyOptions,
  type DirectGateCalls,
  type RetryPolicySettings,
} from "./retryPolicyOptions.js";
import { answered, endAttempt, failed, runAttempt, startAttempt, type AttemptTimeout } from "./runAttempt.js";

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
  const hooks = observerHooks(settings.observers);
  return {
    name: resilientRetryPolicyName,
    sendRequest: (request, next) => sendWithRetries(request, next, settings, hooks),
  };
}

/**
 * Each hook's listeners, found and bound once: an event nobody listens to is never built,
 * and a call is a plain function call, not a lookup of the hook by name on each observer.
 */
interface ObserverHooks {
  onAttempt: readonly Listener<AttemptEvent>[];
  onRetry: readonly Listener<RetryEvent>[];
  onOperationEnd: readonly Listener<OperationEvent>[];
  onAmbiguousWrite: readonly Listener<AmbiguousWriteEvent>[];
  /**
   * With observers that record a first-try success in one call: those calls, and the other
   * observers' hooks for that path. Undefined without such observers.
   */
  firstTry: { recorders: readonly FirstTryListener[]; others: ObserverHooks } | undefined;
}

type Listener<E> = (event: E) => void;
type FirstTryListener = (request: PipelineRequest, elapsedInMs: number) => void;

function observerHooks(observers: readonly RetryObserver[]): ObserverHooks {
  const recorders = observers.filter(isFirstTrySuccessRecorder);
  return {
    ...hookListeners(observers),
    firstTry:
      recorders.length === 0
        ? undefined
        : {
            recorders: recorders.map((r) => r[recordFirstTrySuccess].bind(r)),
            others: { ...hookListeners(observers.filter((o) => !isFirstTrySuccessRecorder(o))), firstTry: undefined },
          },
  };
}

function hookListeners(observers: readonly RetryObserver[]): Omit<ObserverHooks, "firstTry"> {
  const listeners = <K extends keyof RetryObserver>(hook: K) =>
    observers.flatMap((o) => (typeof o[hook] === "function" ? [(o[hook] as Listener<HookEvent<K>>).bind(o)] : []));
  return {
    onAttempt: listeners("onAttempt"),
    onRetry: listeners("onRetry"),
    onOperationEnd: listeners("onOperationEnd"),
    onAmbiguousWrite: listeners("onAmbiguousWrite"),
  };
}

type HookEvent<K extends keyof RetryObserver> = Parameters<NonNullable<RetryObserver[K]>>[0];

/** One operation's state, shared by the loop and the helpers that end it. */
interface Operation {
  readonly request: PipelineRequest;
  readonly s: RetryPolicySettings;
  /** Replaced by `firstTry.others` when the first attempt succeeds and recorders take it. */
  hooks: ObserverHooks;
  readonly started: number;
  readonly info: RetryInfo;
  readonly write: boolean;
  /** Parsed at most once, and only for a write that had an unknown outcome; null until then. */
  tableWrite: TableWrite | undefined | null;
}

/**
 * The one I/O loop: attempt, classify, decide, wait, again. Written for the success path
 * (one attempt, no retry): one clock read before and one after, no event built without a
 * listener, no closure beyond the attempt itself.
 */
async function sendWithRetries(
  request: PipelineRequest,
  next: SendRequest,
  s: RetryPolicySettings,
  hooks: ObserverHooks,
): Promise<PipelineResponse> {
  const started = performance.now();
  const deadline = started + s.maxElapsedInMs;
  const op: Operation = { request, s, hooks, started, info: startRetryInfo(request), write: isWriteMethod(request.method), tableWrite: null };
  const info = op.info;
  s.budget?.recordRequest(started);
  let attemptStarted = started;
  let retryNumber = 0;
  let last: AttemptResult | undefined;

  for (;;) {
    if (request.abortSignal?.aborted) {
      return finish(op, undefined, "aborted", "aborted", performance.now(), new AbortError("The operation was aborted."));
    }
    const remaining = deadline - attemptStarted;
    const tryTimeout = s.tryTimeoutInMs > 0 ? s.tryTimeoutInMs : Infinity;
    const reason = remaining < tryTimeout ? "maxElapsedInMs" : "tryTimeoutInMs";
    const timeout: AttemptTimeout = { inMs: Math.max(0, Math.min(tryTimeout, remaining)), reason, now: attemptStarted, deadlines: s.deadlines };
    // Without a gate, or past one that lets it out unwrapped (a partition with no circuit),
    // the attempt runs right here: no promise layer of ours, no closure.
    const gate = s.gate;
    const direct = s.direct;
    const ticket = direct?.admit(request);
    let result: AttemptResult;
    let ended: number;
    try {
      if (gate === undefined || ticket !== undefined) {
        // runAttempt, inlined.
        const callerSignal = request.abortSignal;
        const armed = startAttempt(request, timeout);
        try {
          result = answered(await next(request), s.rules);
        } catch (thrown) {
          result = failed(request, thrown, callerSignal, armed, s.rules);
        } finally {
          if (armed !== undefined) endAttempt(request, armed);
        }
        ended = performance.now();
        const settling = ticket === undefined ? undefined : (direct as DirectGateCalls).settle(ticket, result);
        if (settling !== undefined) await settling;
      } else {
        result = await gate.run(request, () => runAttempt(request, next, timeout, s.rules));
        ended = performance.now();
      }
    } catch (error) {
      if (!isCircuitOpenError(error)) throw error;
      const now = performance.now();
      recordAttempt(op, "circuit_open", now - attemptStarted, undefined);
      const wait = Math.max(MIN_CIRCUIT_WAIT_IN_MS, error.retryAfterInMs) * (1 + CIRCUIT_WAIT_SPREAD * s.random());
      if (!s.gate?.waitWhenOpen || now + wait > deadline) {
        // With a real failure already in hand, surface that: callers keep their statusCode checks.
        return last ? finish(op, last, "circuit_open", "circuit-open", now) : finish(op, undefined, "circuit_open", "circuit-open", now, error);
      }
      // Waiting for the probe is not a retry: nothing reached the network, and no budget is spent.
      try {
        await sleep(op, "circuit_open", wait, "circuit", undefined);
      } catch (abort) {
        const at = performance.now();
        return last ? finish(op, last, "aborted", "aborted", at, abort) : finish(op, undefined, "aborted", "aborted", at, abort);
      }
      attemptStarted = performance.now();
      continue;
    }
    last = result;
    const cls = result.outcomeClass;
    if (cls === "success" && info.attempts === 0 && hooks.firstTry !== undefined) return finishFirstTry(op, hooks.firstTry, result, ended);
    recordAttempt(op, cls, ended - attemptStarted, result);
    if (cls === "success") return finish(op, result, cls, "success", ended);
    if (op.write && isUnknownOutcome(result)) info.unknownOutcomes += 1;
    if (cls === "aborted") return finish(op, result, cls, "aborted", ended);
    if (!isRetriableClass(cls)) {
      if (s.ambiguousWrites && op.write && info.unknownOutcomes > 0) {
        const described = describeWrite(op);
        if (described !== undefined && isAppliedAnswer(described, result)) {
          return settleAmbiguousWrite(op, s.ambiguousWrites, described, result, deadline);
        }
      }
      return finish(op, result, cls, "permanent", ended);
    }
    // Read now rather than up front: only a retry needs it, and a policy after ours may have replaced the body.
    if (!isReplayable(request)) {
      logger.warning("Not retrying: the request body is a stream that the first attempt consumed; pass a stream factory to make it retriable.");
      return finish(op, result, cls, "body-not-replayable", ended);
    }
    if (retryNumber >= s.strategy.maxRetries) return finish(op, result, cls, "retries-exhausted", ended);
    retryNumber += 1;
    const { delayInMs, source } = retryDelay(s, retryNumber, result);
    if (ended + delayInMs >= deadline) return finish(op, result, cls, "deadline", ended);
    if (s.budget !== undefined && !s.budget.tryRetry()) return finish(op, result, cls, "budget-exhausted", ended);
    releaseBody(result);
    try {
      await sleep(op, cls, delayInMs, source, result);
    } catch (error) {
      return finish(op, result, "aborted", "aborted", performance.now(), error);
    }
    attemptStarted = performance.now();
  }
}

/**
 * The first attempt succeeded and some observers record that in one call: they get it, the
 * others their usual `onAttempt` and `onOperationEnd`, in the usual order.
 */
function finishFirstTry(op: Operation, firstTry: NonNullable<ObserverHooks["firstTry"]>, result: AttemptResult, ended: number): PipelineResponse {
  op.hooks = firstTry.others;
  const elapsedInMs = ended - op.started;
  recordAttempt(op, "success", elapsedInMs, result);
  for (const record of firstTry.recorders) {
    try {
      record(op.request, elapsedInMs);
    } catch (error) {
      logger.warning(`A retry observer's first-try success hook threw and was ignored: ${(error as Error)?.name ?? "error"}`);
    }
  }
  return finish(op, result, "success", "success", ended);
}

/** The write's description, parsed at most once. */
function describeWrite(op: Operation): TableWrite | undefined {
  if (op.tableWrite === null) op.tableWrite = describeTableWrite(op.request, bodyText(op.request));
  return op.tableWrite;
}

/** Ends the operation: records why, tells the observers, and returns or throws what the caller gets. */
function finish(
  op: Operation,
  result: AttemptResult | undefined,
  finalClass: AttemptClass,
  stopReason: StopReason,
  now: number,
  error?: unknown,
  resolution?: AmbiguousWriteResult,
): PipelineResponse {
  const { info, s, request } = op;
  info.stopReason = stopReason;
  info.elapsedInMs = now - op.started;
  s.endOperation?.(request);
  if (op.write && info.unknownOutcomes > 0) noteAmbiguity(op, describeWrite(op), stopReason, resolution);
  if (stopReason !== "success" && stopReason !== "permanent") {
    logger.warning(`Gave up after ${info.attempts} attempt(s): ${stopReason} (last: ${finalClass}).`);
  }
  if (op.hooks.onOperationEnd.length > 0) {
    notify(op.hooks.onOperationEnd, "onOperationEnd", {
      request,
      response: result?.response,
      error: error ?? result?.error,
      attempts: info.attempts,
      finalClass,
      stopReason,
      elapsedInMs: info.elapsedInMs,
    });
  }
  return surface(result, error);
}

/**
 * A retry answered what an earlier, unknown attempt's success would cause (409 after an
 * insert, 404 after a delete, 412 after a conditional update): read the entity back. The
 * same as sent: the write succeeded, report success. Otherwise the error surfaces as it
 * is, marked possibly applied.
 */
async function settleAmbiguousWrite(
  op: Operation,
  options: Required<AmbiguousWriteOptions>,
  write: TableWrite,
  result: AttemptResult,
  deadline: number,
): Promise<PipelineResponse> {
  const timeoutInMs = Math.min(options.readBackTimeoutInMs, deadline - performance.now());
  const outcome = await readBackAmbiguousWrite(op.request, write, bodyText(op.request), timeoutInMs);
  logger.info(`An ambiguous ${write.operation} was read back: ${outcome.result}.`);
  const now = performance.now();
  if (outcome.result === "applied" && outcome.response !== undefined) {
    const response = outcome.response;
    return finish(op, { response, status: response.status, outcomeClass: "success" }, "success", "success", now, undefined, "applied");
  }
  return finish(op, result, result.outcomeClass, "permanent", now, undefined, outcome.result);
}

/** Marks a write that ended after an unknown outcome, and tells the observers. */
function noteAmbiguity(op: Operation, write: TableWrite | undefined, stopReason: StopReason, resolution: AmbiguousWriteResult | undefined): void {
  // A batch's HTTP success can hide a failed sub-request (the SDK throws after reading the body).
  const result = resolution ?? (write?.kind === "batch" ? "not_resolvable" : stopReason === "success" ? undefined : "unresolved");
  if (result === undefined) return;
  const { info, request } = op;
  info.ambiguousWrite = result;
  info.possiblyApplied = result !== "applied";
  notify(op.hooks.onAmbiguousWrite, "onAmbiguousWrite", { request, operation: write?.operation ?? "other", result, unknownOutcomes: info.unknownOutcomes });
}

function recordAttempt(op: Operation, attemptClass: AttemptClass, durationInMs: number, result: AttemptResult | undefined): void {
  const info = op.info;
  info.attempts += 1;
  info.classes.push(attemptClass);
  if (op.hooks.onAttempt.length === 0) return;
  notify(op.hooks.onAttempt, "onAttempt", {
    request: op.request,
    attempt: info.attempts,
    attemptClass,
    status: result?.status,
    errorCode: result?.errorCode,
    durationInMs,
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
  op: Operation,
  reason: AttemptClass,
  delayInMs: number,
  delaySource: DelaySource,
  failed: AttemptResult | undefined,
): Promise<void> {
  const { request, info } = op;
  const attempt = info.attempts;
  // Verbose: at info the retry log observer (added by installResilience) writes the fuller line.
  if (logger.verbose.enabled) logger.verbose(`Retrying after attempt ${attempt} (${reason}) in ${Math.round(delayInMs)} ms (${delaySource}).`);
  notify(op.hooks.onRetry, "onRetry", { request, attempt, reason, status: failed?.status, errorCode: failed?.errorCode, delayInMs, delaySource });
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

function notify<E>(listeners: readonly Listener<E>[], hook: keyof RetryObserver, event: E): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch (error) {
      logger.warning(`A retry observer's ${hook} threw and was ignored: ${(error as Error)?.name ?? "error"}`);
    }
  }
}
