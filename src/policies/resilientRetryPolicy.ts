// The retry loop (gate → send → record → decide → act) and the helpers that end an operation. Over
// 250 lines: they share one operation's state (the Operation class); split, that state would travel
// between modules. The decisions themselves are elsewhere and pure (decideNext, backoff, classify).
import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { delay } from "@azure/core-util";
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import { isRetriableClass } from "../classification/outcomeClass.js";
import { OperationBackoff } from "../backoff/operationBackoff.js";
import { CircuitOpenError } from "../errors/circuitOpenError.js";
import { PartitionBusyError } from "../errors/partitionBusyError.js";
import { logger } from "../logging/logger.js";
import { parseRetryAfterInMs } from "../timing/retryAfter.js";
import { sleepInSlices } from "../timing/sleepInSlices.js";
import { type AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import { isAppliedAnswer } from "../ambiguousWrites/isAppliedAnswer.js";
import { isUnknownOutcome } from "../ambiguousWrites/isUnknownOutcome.js";
import { isWriteMethod } from "../address/requestMethod.js";
import { bodyText } from "../address/requestBodyText.js";
import type { TableWrite } from "../address/tableWrite.js";
import { readBackAmbiguousWrite } from "../ambiguousWrites/ambiguousWriteReadBack.js";
import { SEND_NOW, type Admission, type Refusal } from "../breaker/attemptGate.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { decideNext, type NextStep } from "./decideNext.js";
import { CallerLoad } from "./callerLoad.js";
import { createObserverHooks, type ObserverHooks } from "../observers/observerHooks.js";
import { isReplayable } from "./replayableBody.js";
import type { AttemptClass, DelaySource, StopReason } from "../observers/retryEvents.js";
import { attachRetryInfo, startRetryInfo, type RetryInfo } from "./retryInfo.js";
import { resolveRetryPolicyOptions, type AmbiguousWriteSettings, type ResilientRetryPolicyOptions, type RetryPolicySettings } from "./retryPolicyOptions.js";
import { answered, endAttempt, failed, startAttempt } from "./runAttempt.js";
import { isSecondaryReadMethod, SecondaryRoute } from "./secondaryReads.js";

/** The policy's name; unique in a pipeline, so users can find and remove it. */
export const resilientRetryPolicyName = "resilientRetryPolicy";

/** Floor under a circuit wait, so a gate that answers 0 cannot make us spin. */
const MIN_CIRCUIT_WAIT_IN_MS = 10;
/**
 * Circuit waits are drawn from [t, (1 + spread) t]. Measured with the demo (a hot partition
 * offline 7 s, then throttled at its target): synchronised waiters came back as one herd,
 * were throttled again and emptied the retry budget; spreading them halved the failures.
 */
const CIRCUIT_WAIT_SPREAD = 1;
/** How often a backoff looks whether its partition's circuit opened meanwhile (a quarter second of a worker lost at most). */
const BACKOFF_CHECK_EVERY_IN_MS = 250;
/** A paced slot this close is taken even by a caller that must not wait (mode "fail", or "auto" when bounded). */
const SHORT_PACED_WAIT_IN_MS = 50;

/**
 * A Retry-phase policy that classifies every attempt, retries the retriable ones with the
 * chosen backoff (honouring server hints, the deadline and the caller's abort signal) and,
 * when it gives up, returns or throws exactly what the last attempt produced.
 */
export function resilientRetryPolicy(options: ResilientRetryPolicyOptions = {}): PipelinePolicy {
  const settings = resolveRetryPolicyOptions(options);
  const hooks = createObserverHooks(settings.observers);
  const load = new CallerLoad();
  return {
    name: resilientRetryPolicyName,
    sendRequest: (request, next) => new Operation(request, settings, hooks, load).run(next),
  };
}

/**
 * One operation: the loop `gate → send → record → decide → act`, and the helpers that end
 * it. The only place that sleeps, aborts, calls the gate and tells the observers.
 */
class Operation {
  readonly request: PipelineRequest;
  readonly s: RetryPolicySettings;
  readonly hooks: ObserverHooks;
  readonly load: CallerLoad;
  readonly address: RequestAddress;
  readonly started = performance.now();
  readonly deadline: number;
  readonly info: RetryInfo;
  readonly write: boolean;
  /** The way to the secondary region, for a read of a client with `secondaryReads` on. */
  readonly secondary: SecondaryRoute | undefined;
  /** The last attempt that reached the network: what the caller gets if we give up. */
  #last: AttemptResult | undefined;
  #retriesDone = 0;
  /** Per-class retry counts and last waits; made at the first retriable failure, so a success allocates none. */
  #backoff: OperationBackoff | undefined;
  /** The clock (performance.now()) when the last attempt ended. */
  #clock = 0;
  /** The abort error a sleep ended with. */
  #abortError: unknown;

  constructor(request: PipelineRequest, s: RetryPolicySettings, hooks: ObserverHooks, load: CallerLoad) {
    this.request = request;
    this.s = s;
    this.hooks = hooks;
    this.load = load;
    this.address = readRequestAddress(request, s.service);
    this.deadline = this.started + s.maxElapsedInMs;
    this.info = startRetryInfo(request);
    this.write = isWriteMethod(request.method);
    this.secondary = s.secondaryReads !== undefined && isSecondaryReadMethod(request.method) ? new SecondaryRoute(s.secondaryReads) : undefined;
    s.budget?.recordRequest(this.started);
  }

  /** gate → send → record → decide → act, until an answer to return or throw. */
  async run(next: SendRequest): Promise<PipelineResponse> {
    this.load.started(this.started);
    try {
      for (;;) {
        if (this.request.abortSignal?.aborted) return this.finish(this.#last, "aborted", "aborted", new AbortError("The operation was aborted."));
        // Gate: a paced slot is waited for, then confirmed (the partition may have stopped serving meanwhile).
        let admission = this.admit();
        const pacedDelayInMs = admission.decision === "send" ? admission.delayInMs : 0;
        if (admission.decision === "send" && admission.delayInMs > 0) {
          // Not let go early: a paced queue moves at the partition's own rate (see CallerLoad.mayWait).
          const waited = await this.load.waitOnPartition(pacedDelayInMs, (ms) => this.sleep(ms), false);
          if (waited === "aborted") return this.finish(this.#last, "aborted", "aborted", this.#abortError);
          admission = this.s.gate?.admit(this.address, this.deadline - performance.now(), admission) ?? admission;
        }
        if (admission.decision === "refuse") {
          // An open circuit keeps reads off the primary, not off the secondary.
          if (this.secondary !== undefined && admission.reason === "circuit-open") {
            const read = await this.readSecondary(next, 0);
            if (read !== undefined) return read;
          }
          const ended = await this.afterRefusal(admission);
          if (ended === ASK_AGAIN) continue;
          return ended;
        }
        // The budget counts a retry when it is sent, not while it waits; a paced partition's are held by its pacing instead.
        const paced = admission.paced === true;
        if (this.#last !== undefined && !paced && this.s.budget !== undefined && !this.s.budget.tryRetry()) {
          return this.finish(this.#last, this.#last.outcomeClass, "budget-exhausted");
        }
        // Send, record.
        // One clock read before and one after: the first attempt starts when the operation does.
        const attemptStarted = this.info.attempts === 0 && pacedDelayInMs === 0 ? this.started : performance.now();
        const { request, s: settings } = this;
        const callerSignal = request.abortSignal;
        const armed = startAttempt(request, this.attemptTimeout(attemptStarted));
        let result: AttemptResult;
        let response: PipelineResponse | undefined;
        try {
          response = await next(request);
          result = answered(response, settings.rules, this.address);
        } catch (thrown) {
          result = failed(request, thrown, callerSignal, armed, settings.rules);
        } finally {
          if (armed !== undefined) endAttempt(request, armed, response?.readableStreamBody);
        }
        this.#clock = performance.now();
        this.s.gate?.record(this.address, admission, result);
        this.recordAttempt(result.outcomeClass, this.#clock - attemptStarted, result, pacedDelayInMs);
        if (this.write && (isUnknownOutcome(result) || this.abortedInFlight(result))) this.info.unknownOutcomes += 1;
        this.#last = result;
        // Decide, act.
        const step = this.decide(result);
        if (step.action === "stop") {
          if (step.reason === "body-not-replayable") logger.warning(NOT_REPLAYABLE_WARNING);
          return this.finish(result, result.outcomeClass, step.reason, undefined, undefined, this.#clock);
        }
        if (step.action === "read-back") return this.settleAmbiguousWrite(result);
        // An empty budget stops us now rather than after the wait; the retry is counted when sent.
        if (!paced && this.s.budget !== undefined && this.s.budget.snapshot().available < 1) return this.finish(result, result.outcomeClass, "budget-exhausted");
        this.#retriesDone += 1;
        releaseBody(result);
        // A read the primary's partition failed (a retry follows only throttled, timeout or
        // transient) may be served by the secondary now, before the backoff; it may take only
        // the time the backoff leaves before the deadline.
        if (this.secondary !== undefined) {
          const read = await this.readSecondary(next, step.delayInMs);
          if (read !== undefined) return read;
          if (performance.now() + step.delayInMs >= this.deadline) return this.finish(result, result.outcomeClass, "deadline");
        }
        // Waited, or let go early because the partition's circuit opened: either way, ask the gate next.
        if ((await this.wait(step.delayInMs, result.outcomeClass, step.source, result)) === "aborted") {
          return this.finish(result, "aborted", "aborted", this.#abortError);
        }
      }
    } finally {
      this.load.ended();
    }
  }

  /**
   * Reads the secondary once, between the primary's attempts (docs/secondary-reads.md). Its
   * success ends the operation; anything else leaves the primary's schedule as it was. Not
   * told to the gate (the breaker learns about the primary's partition only); counted by the
   * retry budget once the operation has made an attempt.
   */
  private async readSecondary(next: SendRequest, reserveInMs: number): Promise<PipelineResponse | undefined> {
    const route = this.secondary as SecondaryRoute;
    // Counts the primary's failed attempts (not circuit refusals): one secondary read after each at most.
    const primaryFailures = this.#retriesDone;
    if (!route.open(this.address, primaryFailures)) return undefined;
    if (this.info.attempts > 0 && this.s.budget !== undefined && !this.s.budget.tryRetry()) return undefined;
    const started = performance.now();
    // The deadline less `reserveInMs` (the primary's next backoff): the secondary never eats the primary's schedule.
    const timeout = this.attemptTimeout(started, reserveInMs);
    if (timeout.inMs <= 0) return undefined;
    const result = await route.send(this.request, next, timeout, this.s.rules, primaryFailures);
    this.#clock = performance.now();
    this.info.secondaryAttempts = (this.info.secondaryAttempts ?? 0) + 1;
    this.recordAttempt(result.outcomeClass, this.#clock - started, result, 0, true);
    if (result.outcomeClass !== "success") {
      releaseBody(result);
      return undefined;
    }
    this.info.answeredBySecondary = true;
    return this.finish(result, "success", "success", undefined, undefined, this.#clock);
  }

  private admit(): Admission {
    const gate = this.s.gate;
    if (gate === undefined) return SEND_NOW;
    // The first ask comes right after the operation started: its clock reading will do (a read costs ~45 ns).
    const remaining = this.deadline - (this.info.attempts === 0 ? this.started : performance.now());
    return gate.admit(this.address, this.mayWaitOnPartition("paced") ? remaining : Math.min(remaining, SHORT_PACED_WAIT_IN_MS));
  }

  /** `"wait"`: always; `"fail"`: never; `"auto"`: unless this would starve a bounded caller's other work. */
  private mayWaitOnPartition(on: "circuit" | "paced"): boolean {
    const mode = this.s.gate?.mode;
    return mode === "wait" || (mode === "auto" && this.load.mayWait(on));
  }

  /** Waits as the refusal and the mode allow, then asks again; or ends the operation. */
  private async afterRefusal(refusal: Refusal): Promise<PipelineResponse | typeof ASK_AGAIN> {
    const step = this.onRefusal(refusal);
    if (step.action !== "retry") {
      const reason = step.action === "stop" ? step.reason : "circuit-open";
      return this.finish(this.#last, this.#last?.outcomeClass ?? "circuit_open", reason, this.refusalError(refusal));
    }
    const waited = await this.wait(step.delayInMs, "circuit_open", "circuit", undefined, true);
    if (waited === "released") return this.release(refusal);
    return waited === "waited" ? ASK_AGAIN : this.finish(this.#last, "aborted", "aborted", this.#abortError);
  }

  /**
   * Mode "auto" let go of an operation waiting on an open circuit: its caller is bounded and
   * starving. It ends at once, as if the gate had refused it in mode "fail".
   */
  private release(refusal: Refusal): PipelineResponse {
    return this.finish(this.#last, this.#last?.outcomeClass ?? "circuit_open", "circuit-open", this.refusalError(refusal));
  }

  /** A refused attempt is counted as one (class `circuit_open`) when its circuit is open; a paced refusal sent nothing to count. */
  private onRefusal(refusal: Refusal): NextStep {
    this.info.retryAfterInMs = refusal.retryAfterInMs;
    if (refusal.reason === "paced") return { action: "stop", reason: "partition-busy" };
    this.recordAttempt("circuit_open", 0, undefined);
    const wait = Math.max(MIN_CIRCUIT_WAIT_IN_MS, refusal.retryAfterInMs) * (1 + CIRCUIT_WAIT_SPREAD * this.s.random());
    return decideNext({
      ...NOTHING_SENT,
      attemptClass: "circuit_open",
      remainingInMs: this.deadline - performance.now(),
      gateWaits: this.mayWaitOnPartition("circuit"),
      gateWaitInMs: wait,
    });
  }

  private refusalError(refusal: Refusal): Error {
    return refusal.reason === "paced"
      ? new PartitionBusyError(refusal.scope, refusal.retryAfterInMs)
      : new CircuitOpenError(refusal.scope, refusal.retryAfterInMs);
  }

  private decide(result: AttemptResult): NextStep {
    const cls = result.outcomeClass;
    if (cls === "success") return STOP_SUCCESS;
    const retriable = isRetriableClass(cls);
    const backoff = retriable ? (this.#backoff ??= new OperationBackoff(this.s.backoff)).next(cls, this.#retriesDone) : undefined;
    return decideNext({
      attemptClass: cls,
      retriesDone: this.#retriesDone,
      maxRetries: backoff?.maxRetries ?? 0,
      // Called right after an attempt: the clock read when it ended will do.
      remainingInMs: this.deadline - this.#clock,
      backoffInMs: backoff?.delayInMs ?? 0,
      retryAfterInMs: retriable ? this.retryAfterHint(result) : undefined,
      // Read now rather than up front: only a retry needs it, and a policy after ours may have replaced the body.
      bodyReplayable: !retriable || isReplayable(this.request),
      answerMayBeOurs: !retriable && this.answerMayBeOurs(result),
      gateWaits: false,
      gateWaitInMs: 0,
    });
  }

  private retryAfterHint(result: AttemptResult): number | undefined {
    const headers = result.response?.headers ?? (result.error as { response?: PipelineResponse } | undefined)?.response?.headers;
    const hint = result.retryAfterInMs ?? (headers === undefined ? undefined : parseRetryAfterInMs(headers));
    return hint === undefined ? undefined : Math.min(hint, this.s.maxRetryAfterInMs);
  }

  /** A write's answer is one an earlier unknown attempt's success would cause (409 after an insert, ...). */
  private answerMayBeOurs(result: AttemptResult): boolean {
    if (this.s.ambiguousWrites === undefined || !this.write || this.info.unknownOutcomes === 0) return false;
    const write = this.tableWrite();
    return write !== undefined && isAppliedAnswer(write, result);
  }

  /** The caller aborted while an attempt was in flight: the request may have reached the store. */
  private abortedInFlight(result: AttemptResult): boolean {
    return result.outcomeClass === "aborted";
  }

  private attemptTimeout(now: number, reserveInMs = 0) {
    const remaining = this.deadline - reserveInMs - now;
    const tryTimeout = this.s.tryTimeoutInMs > 0 ? this.s.tryTimeoutInMs : Infinity;
    const reason = remaining < tryTimeout ? "maxElapsedInMs" : "tryTimeoutInMs";
    return { inMs: Math.max(0, Math.min(tryTimeout, remaining)), reason, now, deadlines: this.s.deadlines };
  }

  /** The write's description: the address reads it at most once. */
  private tableWrite(): TableWrite | undefined {
    return this.address.tableWrite;
  }

  /** Sleeps before a retry or a circuit re-ask; false when the caller aborted meanwhile. */
  private async wait(
    delayInMs: number,
    reason: AttemptClass,
    source: DelaySource,
    failed: AttemptResult | undefined,
    onPartition = false,
  ): Promise<"waited" | "aborted" | "released"> {
    const attempt = this.info.attempts;
    // Verbose: at info the retry log observer (added by installResilience) writes the fuller line.
    if (logger.verbose.enabled) logger.verbose(`Retrying after attempt ${attempt} (${reason}) in ${Math.round(delayInMs)} ms (${source}).`);
    if (this.hooks.listens("onRetry")) {
      this.hooks.notify("onRetry", {
        request: this.request,
        address: this.address,
        attempt,
        reason,
        status: failed?.status,
        errorCode: failed?.errorCode,
        delayInMs,
        delaySource: source,
      });
    }
    if (onPartition) return this.load.waitOnPartition(delayInMs, (ms) => this.sleep(ms), this.s.gate?.mode === "auto");
    return this.load.sleeping(() => this.backoff(delayInMs));
  }

  /**
   * Sleeps a backoff, cut short (`"released"`: the loop asks the gate at once) when the
   * partition's circuit is open and this operation may not wait on it: the gate would refuse
   * the retry anyway, and the caller's worker is free the sooner. Measured with the closed
   * loop (8 workers, a partition offline 6 s): operations that failed there just before its
   * circuit opened held every worker for their first backoff (about a second) at the start
   * of the outage, and each failed probe held one for its backoff.
   */
  private async backoff(delayInMs: number): Promise<"waited" | "aborted" | "released"> {
    const refusesNow = this.s.gate?.refusesNow;
    const cutShort = refusesNow === undefined ? undefined : (): boolean => refusesNow(this.address) && !this.mayWaitOnPartition("circuit");
    if (cutShort?.() === true) return "released";
    return sleepInSlices(delayInMs, (ms) => this.sleep(ms), cutShort, BACKOFF_CHECK_EVERY_IN_MS);
  }

  private async sleep(delayInMs: number): Promise<boolean> {
    try {
      await delay(delayInMs, { abortSignal: this.request.abortSignal, abortErrorMsg: "The operation was aborted." });
      return true;
    } catch (error) {
      this.#abortError = error;
      return false;
    }
  }

  private recordAttempt(attemptClass: AttemptClass, durationInMs: number, result: AttemptResult | undefined, pacedDelayInMs = 0, secondary = false): void {
    this.info.attempts += 1;
    this.info.classes.push(attemptClass);
    if (this.hooks.listens("onAttempt")) {
      this.hooks.notify("onAttempt", {
        request: this.request,
        address: this.address,
        attempt: this.info.attempts,
        attemptClass,
        status: result?.status,
        errorCode: result?.errorCode,
        inChangeset: result?.inChangeset,
        durationInMs,
        pacedDelayInMs,
        secondary: secondary ? true : undefined,
      });
    }
  }

  /**
   * A retry answered what an earlier, unknown attempt's success would cause: read the
   * entity back. The same as sent: the write succeeded, report success. Otherwise the
   * error surfaces as it is, marked possibly applied.
   */
  private async settleAmbiguousWrite(result: AttemptResult): Promise<PipelineResponse> {
    const write = this.tableWrite() as TableWrite;
    const options = this.s.ambiguousWrites as AmbiguousWriteSettings;
    const timeoutInMs = Math.min(options.readBackTimeoutInMs, this.deadline - performance.now());
    const outcome = await readBackAmbiguousWrite(this.request, options.readBackRoutes, write, bodyText(this.request), timeoutInMs);
    logger.info(`An ambiguous ${write.operation} was settled: ${outcome.result}.`);
    if (outcome.result === "applied" && outcome.response !== undefined) {
      const response = outcome.response;
      return this.finish({ response, status: response.status, outcomeClass: "success" }, "success", "success", undefined, "applied");
    }
    return this.finish(result, result.outcomeClass, "permanent", undefined, outcome.result);
  }

  /** Ends the operation: records why, tells the observers, and returns or throws what the caller gets. */
  private finish(
    result: AttemptResult | undefined,
    finalClass: AttemptClass,
    stopReason: StopReason,
    error?: unknown,
    resolution?: AmbiguousWriteResult,
    /** When the operation ended, when the caller has just read the clock. */
    endedAt?: number,
  ): PipelineResponse {
    const { info, request } = this;
    info.stopReason = stopReason;
    info.elapsedInMs = (endedAt ?? performance.now()) - this.started;
    // Blob's and Queue's results carry a copy of the request (`_response.request`): their response is marked too.
    // Not a Tables one (the SDK hands back the request itself): a property added to the response costs about 150 ns.
    if (result?.response !== undefined && this.s.service !== "table") attachRetryInfo(result.response, info);
    // With a real failure in hand, surface that rather than our own error: callers keep their statusCode checks.
    const surfaced = error !== undefined && result !== undefined && stopReason !== "aborted" ? undefined : error;
    if (this.write && info.unknownOutcomes > 0) this.noteAmbiguity(stopReason, resolution);
    if (stopReason !== "success" && stopReason !== "permanent") {
      logger.warning(
        `Gave up on ${this.address.operation} (partition scope ${this.address.scopeKey ?? "unknown"}) after ${info.attempts} attempt(s): ` +
          `${stopReason} (last: ${finalClass}).`,
      );
    }
    if (this.hooks.listens("onOperationEnd")) {
      this.hooks.notify("onOperationEnd", {
        request,
        address: this.address,
        response: result?.response,
        error: surfaced ?? result?.error,
        attempts: info.attempts,
        finalClass,
        stopReason,
        elapsedInMs: info.elapsedInMs,
      });
    }
    return surface(info, result, surfaced);
  }

  /** Marks a write that ended after an unknown outcome, and tells the observers. */
  private noteAmbiguity(stopReason: StopReason, resolution: AmbiguousWriteResult | undefined): void {
    const write = this.tableWrite();
    // A batch's HTTP success can hide a failed sub-request (the SDK throws after reading the body).
    const result = resolution ?? (write?.kind === "batch" ? "not_resolvable" : stopReason === "success" ? undefined : "unresolved");
    if (result === undefined) return;
    this.info.ambiguousWrite = result;
    this.info.possiblyApplied = result !== "applied";
    this.hooks.notify("onAmbiguousWrite", {
      request: this.request,
      address: this.address,
      operation: write?.operation ?? "other",
      result,
      unknownOutcomes: this.info.unknownOutcomes,
    });
  }
}

/** `afterRefusal`'s answer when the operation goes on: ask the gate again. */
const ASK_AGAIN = Symbol("ask again");

const STOP_SUCCESS: NextStep = Object.freeze({ action: "stop", reason: "success" });

/** Says why a retriable failure was not retried, and what makes it retriable. */
const NOT_REPLAYABLE_WARNING =
  "Not retrying: the request body is a stream that the first attempt consumed; pass a stream factory to make it retriable.";

/** Decision inputs that do not apply when no attempt was sent. */
const NOTHING_SENT = {
  retriesDone: 0,
  maxRetries: 0,
  backoffInMs: 0,
  retryAfterInMs: undefined,
  bodyReplayable: true,
  answerMayBeOurs: false,
} as const;

/** A streamed error body we will not read would hold its socket: drain it. */
function releaseBody(result: AttemptResult): void {
  result.response?.readableStreamBody?.resume();
}

/**
 * Returns or throws exactly what the SDK would have seen from the last attempt. An error
 * that does not lead back to the request (our own, an abort) gets the operation's record
 * itself, so that `getRetryInfo(error)` and `isPossiblyApplied(error)` answer for the error
 * the caller catches. The record, not the request: the request's URL and headers would
 * carry a SAS or an Authorization header into whatever logs the error.
 */
function surface(info: RetryInfo, result: AttemptResult | undefined, error?: unknown): PipelineResponse {
  if (error !== undefined) throw withRecord(error, info);
  if (result?.response) return result.response;
  throw withRecord(result?.error, info);
}

function withRecord(error: unknown, info: RetryInfo): unknown {
  if (typeof error === "object" && error !== null && !("request" in error) && Object.isExtensible(error)) attachRetryInfo(error, info);
  return error;
}
