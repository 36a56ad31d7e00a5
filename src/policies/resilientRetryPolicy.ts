// The retry loop: it gathers the facts, asks decideNext, and carries out the step. Every
// decision is in decideNext, the gate and the budget in admittedOperation.ts, the waits in
// operationWaits.ts, the ending in operationEnding.ts.
import type { PipelinePolicy, PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { readRequestAddress } from "../address/requestAddress.js";
import { isRetriableClass } from "../classification/outcomeClass.js";
import { OperationBackoff } from "../backoff/operationBackoff.js";
import type { SleepEnd } from "../timing/sleepInSlices.js";
import { isAppliedAnswer, isUnknownOutcome } from "../ambiguousWrites/writeOutcome.js";
import { isWriteMethod } from "../address/requestMethod.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { CallerPolicy, type Waiter } from "./callerPolicy.js";
import { decideNext, newDecisionFacts, type DecisionFacts, type DecisionPoint, type Step } from "./decideNext.js";
import { createObserverHooks, type ObserverHooks } from "../observers/observerHooks.js";
import { isReplayable } from "./replayableBody.js";
import type { AttemptClass, LocalWaitReason } from "../observers/retryEvents.js";
import { startRetryInfo, type RetryInfo } from "./retryInfo.js";
import { resolveRetryPolicyOptions, type ResilientRetryPolicyOptions, type RetryPolicySettings } from "./retryPolicyOptions.js";
import { answered, endAttempt, failed, retryAfterOf, startAttempt, type ArmedAttempt } from "./runAttempt.js";
import { isSecondaryReadMethod, SecondaryRoute } from "./secondaryReads.js";
import { endOperation, settleAmbiguousWrite, type Ending } from "./operationEnding.js";
import type { TableWrite } from "../address/tableWrite.js";
import { callerMay, leaveWait, sleepFor } from "./operationWaits.js";
import { AdmittedOperation } from "./admittedOperation.js";
import { resumableDownload } from "../downloads/resumableDownload.js";

/** The policy's name; unique in a pipeline, so users can find and remove it. */
export const resilientRetryPolicyName = "resilientRetryPolicy";

/**
 * A Retry-phase policy that classifies every attempt, retries the retriable ones with the
 * chosen backoff (honouring server hints, the deadline and the caller's abort signal) and,
 * when it gives up, returns or throws exactly what the last attempt produced.
 */
export function resilientRetryPolicy(options: ResilientRetryPolicyOptions = {}): PipelinePolicy {
  return createRetryPolicyWithCaller(options).policy;
}

/** {@link resilientRetryPolicy} and its caller policy, which `installResilience`'s handle tracks work with. */
export function createRetryPolicyWithCaller(options: ResilientRetryPolicyOptions): { policy: PipelinePolicy; caller: CallerPolicy } {
  const settings = resolveRetryPolicyOptions(options);
  const hooks = createObserverHooks(settings.observers);
  // One per policy (installResilience makes one policy per install): the caller declared is this client's.
  const caller = new CallerPolicy(settings.caller);
  return {
    policy: {
      name: resilientRetryPolicyName,
      sendRequest: (request, next) => new Operation(request, settings, hooks, caller).run(next),
    },
    caller,
  };
}

/** One operation: the loop, and the state it keeps between steps. The only place that sleeps, sends and tells the observers. */
export class Operation extends AdmittedOperation {
  readonly request: PipelineRequest;
  readonly hooks: ObserverHooks;
  readonly caller: CallerPolicy;
  readonly started = performance.now();
  /** When the operation gives up; a download's resume moves it (see {@link Operation.resume}). */
  deadline: number;
  readonly info: RetryInfo;
  readonly write: boolean;
  /** The way to the secondary region, for a read of a client with `secondaryReads` on. */
  readonly secondary: SecondaryRoute | undefined;
  /** The facts decideNext reads, refilled before each decision (one object per operation). */
  readonly facts: DecisionFacts;
  /** The last primary attempt (or the secondary's success): what the caller gets if we stop. */
  last: AttemptResult | undefined;
  /** The clock (performance.now()) when the last attempt ended. */
  clock = 0;
  #attemptStarted = 0;
  #primaryUrl = "";
  #primaryFailures = 0;
  /** Retries sent (a backoff waited is a retry on its way). */
  #retries = 0;
  /** Where the decision to read the secondary was taken: after a refusal (`gate`) or a failure (`attempt`). */
  #secondaryFrom: DecisionPoint = "gate";
  #backoff: OperationBackoff | undefined;
  /** Its place among the caller policy's waiters while it waits without sending. */
  waiter: Waiter | undefined;
  /** True once the operation resumes a download whose body was cut: its end was reported with its first answer. */
  resuming = false;

  constructor(request: PipelineRequest, s: RetryPolicySettings, hooks: ObserverHooks, caller: CallerPolicy) {
    super(s, readRequestAddress(request, s.service));
    this.request = request;
    this.hooks = hooks;
    this.caller = caller;
    this.deadline = this.started + s.maxElapsedInMs;
    this.info = startRetryInfo(request);
    this.write = isWriteMethod(request.method);
    this.secondary = s.secondaryReads !== undefined && isSecondaryReadMethod(request.method) ? new SecondaryRoute(s.secondaryReads) : undefined;
    this.facts = newDecisionFacts();
    s.budget?.recordRequest(this.started);
  }

  /**
   * gate → send → record → decide → act, until a step ends the operation. `resumed`: the loop
   * starts from the failure in `last` (a download's cut body, {@link Operation.resume}).
   */
  async run(next: SendRequest, resumed = false): Promise<PipelineResponse> {
    this.caller.started();
    try {
      if (this.request.abortSignal?.aborted) return this.aborted(undefined);
      let step = decideNext(resumed ? this.attemptFacts(true) : this.askGate());
      for (;;) {
        switch (step.action) {
          case "send": {
            // One attempt, primary or secondary, in four steps written out here: wrapped in an async
            // function of its own, it would cost the success path a promise and a microtask.
            const armed = this.startSend(step);
            let response: PipelineResponse | undefined;
            let result: AttemptResult;
            try {
              response = await next(this.request);
              result = answered(response, this.s.rules, this.address);
            } catch (thrown) {
              result = failed(this.request, thrown, armed === undefined ? this.request.abortSignal : armed.callerSignal, armed, this.s.rules);
            } finally {
              this.endSend(step, armed, response);
            }
            step = decideNext(this.record(step, result));
            break;
          }
          case "wait": {
            const waited = await this.wait(step);
            // A wait of 0 ms sleeps nothing, so may not have seen an abort.
            if (waited.ended === "aborted" || this.request.abortSignal?.aborted) return this.aborted(waited);
            step = decideNext(waited.ended === "released" && !callerMay(this, step.on) ? this.releasedFacts(step.on) : this.askGate());
            break;
          }
          case "read-back":
            return this.end(await settleAmbiguousWrite(this));
          case "stop": {
            const response = this.end(step);
            // A blob download's body is read after we return: if it is cut, the rest is asked for (downloads/).
            return this.resuming ? response : resumableDownload(this, next, response);
          }
        }
      }
    } finally {
      // Ended during a paced wait (aborted, let go, or the deadline): what the slot holds goes back.
      this.abandonReserved();
      leaveWait(this);
      this.caller.ended();
    }
  }

  /**
   * Resumes a blob download whose body was cut (`cut`: that failure, classified as an attempt's
   * would be), once downloads/resumableDownload.ts has pointed the request at the rest of the
   * range: the loop goes on from the failure, through the same backoff, gate, budget and retry
   * count, and resolves with the answer or rejects as the operation would have. The deadline
   * bounds the wait for answers, not the reading of bodies: it counts again from the cut.
   */
  resume(next: SendRequest, cut: AttemptResult): Promise<PipelineResponse> {
    this.resuming = true;
    this.info.resumes = (this.info.resumes ?? 0) + 1;
    this.clock = performance.now();
    this.deadline = this.clock + this.s.maxElapsedInMs;
    this.last = cut;
    return this.run(next, true);
  }

  /** Gate: the gate's and the budget's answers for the next attempt; a circuit refusal counts as an attempt. */
  private askGate(): DecisionFacts {
    const f = this.facts;
    f.point = "gate";
    // The first ask comes right after the operation started: its clock reading will do.
    f.remainingInMs = this.deadline - (this.info.attempts === 0 ? this.started : performance.now());
    f.callerMayWait = callerMay(this, "circuit");
    f.secondaryOpen = false;
    f.jitter = 0;
    const refusal = this.admitNext(f, this.last !== undefined);
    if (refusal === undefined) return f;
    this.info.retryAfterInMs = refusal.retryAfterInMs;
    f.jitter = this.s.random();
    if (f.gate !== "paced") {
      f.secondaryOpen = this.secondaryOpen() && this.secondaryBudgeted(f, this.last !== undefined);
      // Counted as an attempt unless the read goes to the secondary instead.
      if (!f.secondaryOpen || f.remainingInMs <= 0) this.recordAttempt("circuit_open", 0, undefined);
    }
    return f;
  }

  /** Before an attempt: leave any wait, spend the budget for a secondary read, point the request and arm its timeout. */
  private startSend(step: Step & { action: "send" }): ArmedAttempt | undefined {
    leaveWait(this);
    const toSecondary = step.to === "secondary";
    if (toSecondary) this.spendSecondaryRetry(this.last !== undefined);
    const now = this.info.attempts === 0 && this.pacedDelayInMs === 0 ? this.started : performance.now();
    this.#attemptStarted = now;
    if (toSecondary) {
      this.#secondaryFrom = this.facts.point;
      this.#primaryUrl = (this.secondary as SecondaryRoute).redirect(this.request, this.#primaryFailures);
    }
    return startAttempt(this.request, this.deadline - (toSecondary ? step.reserveInMs : 0), this.s.tryTimeoutInMs, now, this.s.deadlines);
  }

  private endSend(step: Step & { action: "send" }, armed: ArmedAttempt | undefined, response: PipelineResponse | undefined): void {
    if (armed !== undefined) endAttempt(this.request, armed, response?.readableStreamBody);
    if (step.to === "secondary") (this.secondary as SecondaryRoute).restore(this.request, this.#primaryUrl);
  }

  /** Record: tell the gate and the observers, then gather the facts after the attempt. */
  private record(step: Step & { action: "send" }, result: AttemptResult): DecisionFacts {
    this.clock = performance.now();
    if (step.to === "secondary") {
      (this.secondary as SecondaryRoute).learn(result);
      this.info.secondaryAttempts = (this.info.secondaryAttempts ?? 0) + 1;
      this.recordAttempt(result.outcomeClass, this.clock - this.#attemptStarted, result, 0, true);
      if (result.outcomeClass === "success") {
        this.info.answeredBySecondary = true;
        this.last = result;
      } else {
        result.response?.readableStreamBody?.resume();
      }
      // Failed after a refusal: the gate's facts again (wait or stop as it says); after a failure: the primary's.
      return this.#secondaryFrom === "gate" && result.outcomeClass !== "success" ? this.askGate() : this.attemptFacts(false);
    }
    const pacedDelayInMs = this.recordAdmitted(result);
    this.recordAttempt(result.outcomeClass, this.clock - this.#attemptStarted, result, pacedDelayInMs);
    if (this.write && (isUnknownOutcome(result) || result.outcomeClass === "aborted")) this.info.unknownOutcomes += 1;
    this.last = result;
    return this.attemptFacts(true);
  }

  /** Decide: the facts after the last primary attempt; `fresh` when it has just come back (its backoff is drawn once). */
  private attemptFacts(fresh: boolean): DecisionFacts {
    const f = this.facts;
    const result = this.last as AttemptResult;
    const cls = result.outcomeClass;
    f.point = "attempt";
    f.attemptClass = cls;
    // Right after an attempt: the clock read when it ended will do.
    f.remainingInMs = this.deadline - this.clock;
    f.answerUnreadable = result.unreadableBody === true;
    if (cls === "success") return f;
    const retriable = isRetriableClass(cls);
    if (fresh) {
      const backoff = retriable ? (this.#backoff ??= new OperationBackoff(this.s.backoff)).next(cls, this.#retries) : undefined;
      if (retriable) this.#primaryFailures += 1;
      f.retriesDone = this.#retries;
      f.maxRetries = backoff?.maxRetries ?? 0;
      f.backoffInMs = backoff?.delayInMs ?? 0;
      f.retryAfterInMs = retriable ? retryAfterOf(result, this.s.maxRetryAfterInMs) : undefined;
      // Read now rather than up front: only a retry needs it, and a policy after ours may have replaced the body.
      f.bodyReplayable = !retriable || isReplayable(this.request);
      f.wasProbe = retriable && this.lastWasProbe;
      f.answerMayBeOurs = !retriable && this.answerMayBeOurs(result);
    }
    this.forecastBudget(f, retriable);
    f.callerMayWait = callerMay(this, "budget");
    f.callerMayBackOff = callerMay(this, "backoff");
    // The secondary's read is a retry the budget counts even when the primary's (paced) retry is free.
    f.secondaryOpen = retriable && this.secondaryOpen() && this.secondaryBudgeted(f, true);
    return f;
  }

  private releasedFacts(reason: LocalWaitReason): DecisionFacts {
    this.facts.point = "released";
    this.facts.waitReason = reason;
    return this.facts;
  }

  /** Act: wait, as a waiter of the caller policy; a backoff counts as a retry, a paced slot is kept for the gate to confirm. */
  private wait(step: Step & { action: "wait" }): Promise<SleepEnd> {
    if (step.on === "backoff") this.#retries += 1;
    if (step.on === "pacing") this.reserveSlot(step.delayInMs);
    return sleepFor(this, step);
  }

  private secondaryOpen(): boolean {
    return this.secondary !== undefined && this.secondary.open(this.address, this.#primaryFailures);
  }

  /** A write's answer is one an earlier unknown attempt's success would cause (409 after an insert, ...). */
  private answerMayBeOurs(result: AttemptResult): boolean {
    if (this.s.ambiguousWrites === undefined || !this.write || this.info.unknownOutcomes === 0) return false;
    const write = this.tableWrite();
    return write !== undefined && isAppliedAnswer(write, result);
  }

  /** The write's description: the address reads it at most once. */
  tableWrite(): TableWrite | undefined {
    return this.address.tableWrite;
  }

  recordAttempt(attemptClass: AttemptClass, durationInMs: number, result: AttemptResult | undefined, pacedDelayInMs = 0, secondary = false): void {
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

  /** Ends an aborted operation with the abort its wait saw, or with our own when none did. */
  private aborted(waited: SleepEnd | undefined): PipelineResponse {
    const error = waited?.ended === "aborted" ? waited.error : new AbortError("The operation was aborted.");
    return this.end({ reason: "aborted", finalClass: "aborted", error });
  }

  /** Ends the operation (operationEnding.ts): returns or throws what the caller gets. */
  private end(ending: Ending): PipelineResponse {
    leaveWait(this);
    return endOperation(this, ending);
  }
}
