// One operation: the retry loop. Its readers gather the facts (changing nothing), decideNext
// chooses the step, and the loop carries it out. Every decision is in decideNext; the gate and the
// budget are asked in admittedOperation.ts, the waits carried out in operationWaits.ts, the ending
// in operationEnding.ts.
import type { PipelineRequest, PipelineResponse, SendRequest } from "@azure/core-rest-pipeline";
import { isRetriableClass } from "../classification/outcomeClass.js";
import { OperationBackoff } from "../backoff/operationBackoff.js";
import type { SleepEnd } from "../timing/sleepInSlices.js";
import { isAppliedAnswer, isTableAsAsked, isUnknownOutcome } from "../ambiguousWrites/writeOutcome.js";
import type { ReadBackOutcome } from "../ambiguousWrites/readBackDecision.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { CallerPolicy } from "./callerPolicy.js";
import { decideNext, type Step, type StopStep, type WaitStep } from "./decideNext.js";
import { newDecisionFacts, type DecisionFacts } from "./decisionFacts.js";
import type { ObserverHooks } from "../observers/observerHooks.js";
import { isReplayable } from "./replayableBody.js";
import type { LocalWaitReason } from "../observers/retryEvents.js";
import type { RetryPolicySettings } from "./retryPolicyOptions.js";
import { answered, endAttempt, failed, retryAfterOf, startAttempt, type ArmedAttempt } from "./runAttempt.js";
import { isSecondaryReadMethod, SecondaryRoute } from "./secondaryReads.js";
import { endOperation, readBack } from "./operationEnding.js";
import { OperationWaits } from "./operationWaits.js";
import { AdmittedOperation } from "./admittedOperation.js";
import { resumableDownload } from "../downloads/resumableDownload.js";

/** One operation: the loop, and the state it keeps between steps. The only place that sleeps, sends and tells the observers. */
export class Operation extends AdmittedOperation {
  readonly caller: CallerPolicy;
  /** When the operation gives up; a download's resume moves it (see {@link Operation.resume}). */
  #deadline: number;
  /** The way to the secondary region, for a read of a client with `secondaryReads` on. */
  readonly #secondary: SecondaryRoute | undefined;
  /** The facts decideNext reads, refilled by the readers before each decision (one object per operation). */
  readonly #facts: DecisionFacts;
  /** The last primary attempt (or the secondary's success): what the caller gets if we stop. */
  #last: AttemptResult | undefined;
  /** The clock (performance.now()) when the last attempt ended. */
  #clock = 0;
  #attemptStarted = 0;
  #primaryFailures = 0;
  /** Retries sent (a backoff waited is a retry on its way). */
  #retries = 0;
  #backoff: OperationBackoff | undefined;
  /** Its place among the caller policy's waiters: made at its first wait. */
  #waits: OperationWaits | undefined;
  /** The abort the last wait saw, surfaced when it ends the operation. */
  #abort: unknown;
  #readBack: ReadBackOutcome | undefined;
  /** True once the operation resumes a download whose body was cut: its end was reported with its first answer. */
  #resuming = false;

  constructor(request: PipelineRequest, s: RetryPolicySettings, hooks: ObserverHooks, caller: CallerPolicy) {
    super(request, s, hooks);
    this.caller = caller;
    this.#deadline = this.started + s.maxElapsedInMs;
    this.#secondary = s.secondaryReads !== undefined && isSecondaryReadMethod(request.method) ? new SecondaryRoute(s.secondaryReads) : undefined;
    const f = (this.#facts = newDecisionFacts());
    f.callerKind = caller.settings.kind;
    f.hasBudget = s.budget !== undefined;
    s.budget?.recordRequest(this.started);
  }

  /**
   * Read the facts, decide, carry the step out, until a step ends the operation. `resumed`: the
   * loop starts from the failure in `last` (a download's cut body, {@link Operation.resume}).
   */
  async run(next: SendRequest, resumed = false): Promise<PipelineResponse> {
    this.caller.started();
    try {
      let step = decideNext(resumed ? this.#attemptFacts(true) : this.#readyFacts(undefined, undefined));
      for (;;) {
        switch (step.action) {
          case "admit":
            step = decideNext(this.#gateFacts(step.queueForInMs));
            break;
          case "take-retry":
            this.takeRetry(this.#facts);
            step = decideNext(this.#facts);
            break;
          case "send": {
            // One attempt, primary or secondary, in four steps written out here: wrapped in an async
            // function of its own, it would cost the success path a promise and a microtask.
            const armed = this.#startSend(step);
            let response: PipelineResponse | undefined;
            let result: AttemptResult;
            try {
              response = await next(this.request);
              result = answered(response, this.s.rules, this.address);
            } catch (thrown) {
              result = failed(this.request, thrown, armed === undefined ? this.request.abortSignal : armed.callerSignal, armed, this.s.rules);
            } finally {
              this.#endSend(step, armed, response);
            }
            step = decideNext(this.#record(step, result));
            break;
          }
          case "wait":
            if (step.refused === true) this.recordAttempt("circuit_open", 0, undefined);
            step = decideNext(this.#readyFacts(await this.#wait(step), step.on));
            break;
          case "read-back":
            this.#readBack = await readBack(this, this.#deadline);
            step = decideNext(this.#settledFacts());
            break;
          case "stop": {
            if (step.refused === true) this.recordAttempt("circuit_open", 0, undefined);
            const response = this.#end(step);
            // A blob download's body is read after we return: if it is cut, the rest is asked for (downloads/).
            return this.#resuming ? response : resumableDownload(this, next, response);
          }
        }
      }
    } finally {
      // Ended while it waited for the gate (aborted, let go, or the deadline): its place goes back.
      this.leaveQueue();
      this.#waits?.leave();
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
    this.#resuming = true;
    this.info.resumes = (this.info.resumes ?? 0) + 1;
    this.#clock = performance.now();
    this.#deadline = this.#clock + this.s.maxElapsedInMs;
    this.#last = cut;
    return this.run(next, true);
  }

  /** Ready to ask the gate: at the start (`waited` undefined) or after a wait for `reason`. */
  #readyFacts(waited: SleepEnd | undefined, reason: LocalWaitReason | undefined): DecisionFacts {
    const f = this.#facts;
    f.point = "ready";
    f.aborted = waited?.ended === "aborted" || this.request.abortSignal?.aborted === true;
    this.#abort = waited?.ended === "aborted" ? waited.error : undefined;
    f.waitReason = reason;
    f.letGo = waited?.ended === "released";
    f.mayKeepWaiting = reason === undefined || this.#callerMay(reason);
    f.retry = this.#last !== undefined;
    // The first ask comes right after the operation started: its clock reading will do.
    f.remainingInMs = this.#deadline - (waited === undefined && this.info.attempts === 0 ? this.started : performance.now());
    f.callerMayWait = this.#callerMay("circuit");
    return f;
  }

  /** `admit`: the gate's answer; for a scope that serves nothing, the secondary's and the budget's facts. */
  #gateFacts(queueForInMs: number): DecisionFacts {
    const f = this.#facts;
    const refusal = this.admit(f, queueForInMs);
    if (refusal !== undefined) this.info.retryAfterInMs = refusal.retryAfterInMs;
    if (f.gate === "circuit-open" || f.gate === "wait-circuit") this.#secondaryFacts(f);
    return f;
  }

  /** Before an attempt: leave any wait, spend the budget for a secondary read, point the request and arm its timeout. */
  #startSend(step: Step & { action: "send" }): ArmedAttempt | undefined {
    this.#waits?.leave();
    const now = this.info.attempts === 0 && this.pacedDelayInMs === 0 ? this.started : performance.now();
    this.#attemptStarted = now;
    if (step.to === "primary") return startAttempt(this.request, this.#deadline, this.s.tryTimeoutInMs, now, this.s.deadlines);
    // The built-in budget granted it (decideNext read it); a budget of one's own that refuses here lets this read go uncounted.
    if (step.spendsRetry === true) this.s.budget?.tryRetry();
    this.#facts.secondaryFrom = this.#facts.point === "gate" ? "gate" : "attempt";
    // Read instead of waiting for the gate: its place in the queue goes back (a turn granted meanwhile would go unsent).
    if (this.#facts.secondaryFrom === "gate") this.leaveQueue();
    (this.#secondary as SecondaryRoute).redirect(this.request, this.#primaryFailures);
    return startAttempt(this.request, this.#deadline - step.reserveInMs, this.s.tryTimeoutInMs, now, this.s.deadlines);
  }

  #endSend(step: Step & { action: "send" }, armed: ArmedAttempt | undefined, response: PipelineResponse | undefined): void {
    if (armed !== undefined) endAttempt(this.request, armed, response?.readableStreamBody);
    if (step.to === "secondary") (this.#secondary as SecondaryRoute).restore(this.request);
  }

  /** Record: tell the gate and the observers, then read the facts after the attempt. */
  #record(step: Step & { action: "send" }, result: AttemptResult): DecisionFacts {
    this.#clock = performance.now();
    if (step.to === "secondary") return this.#recordSecondary(result);
    const pacedDelayInMs = this.recordAdmitted(result);
    this.recordAttempt(result.outcomeClass, this.#clock - this.#attemptStarted, result, pacedDelayInMs);
    if (this.write && (isUnknownOutcome(result) || result.outcomeClass === "aborted")) this.#unknownOutcome();
    this.#last = result;
    return this.#attemptFacts(true);
  }

  #recordSecondary(result: AttemptResult): DecisionFacts {
    const answer = (this.#secondary as SecondaryRoute).learn(result, this.info);
    this.recordAttempt(result.outcomeClass, this.#clock - this.#attemptStarted, result, 0, true);
    if (answer === "success") this.#last = result;
    // The primary's failure, if there is one, read again for the rows that follow a failed secondary read.
    else if (this.#last !== undefined) this.#attemptFacts(false);
    const f = this.#facts;
    f.point = "secondary";
    f.aborted = false;
    f.letGo = false;
    f.secondaryAnswer = answer;
    f.remainingInMs = this.#deadline - this.#clock;
    f.callerMayWait = this.#callerMay("circuit");
    return f;
  }

  /** The facts after the last primary attempt; `fresh` when it has just come back (its backoff is drawn once). */
  #attemptFacts(fresh: boolean): DecisionFacts {
    const f = this.#facts;
    const result = this.#last as AttemptResult;
    const cls = result.outcomeClass;
    f.point = "attempt";
    f.attemptClass = cls;
    f.retry = true;
    // Right after an attempt: the clock read when it ended will do.
    f.remainingInMs = this.#deadline - this.#clock;
    f.answerUnreadable = result.unreadableBody === true;
    if (f.unknownOutcome) f.tableAsAsked = isTableAsAsked(this.address.operation, result);
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
      f.answerMayBeOurs = !retriable && this.#answerMayBeOurs(result);
    }
    f.paced = this.lastWasPaced;
    this.readBudget(f);
    f.callerMayWait = this.#callerMay("budget");
    f.callerMayBackOff = this.#callerMay("backoff");
    if (retriable) this.#secondaryFacts(f);
    else f.secondaryReadable = false;
    return f;
  }

  /** The secondary's facts (and, when it can be read, the budget's: a retry read there needs one). */
  #secondaryFacts(f: DecisionFacts): void {
    f.secondaryReadable = false;
    if (this.#secondary?.readFacts(f, this.address, this.#primaryFailures) === true) this.readBudget(f);
  }

  #settledFacts(): DecisionFacts {
    const f = this.#facts;
    f.point = "settled";
    f.readBack = this.#readBack?.result;
    return f;
  }

  /** The caller policy's answer: may the operation begin (or go on with) a wait for `reason`? */
  #callerMay(reason: LocalWaitReason): boolean {
    const waits = this.#waits;
    return waits === undefined ? this.caller.mayStartWait(reason) : waits.mayWait(reason);
  }

  /** Carries out a wait, as a waiter of the caller policy; a backoff counts as a retry, a wait for the gate toward the next attempt's paced delay. */
  #wait(step: WaitStep): Promise<SleepEnd> {
    if (step.on === "backoff") this.#retries += 1;
    if (step.on === "pacing") this.waitedForGate(step.delayInMs);
    const waits = (this.#waits ??= new OperationWaits(this.caller, this.hooks, this.request, this.address, this.s.gate));
    return waits.sleep(step, this.wakeFor(step.on), this.info.attempts, this.#last);
  }

  #unknownOutcome(): void {
    this.info.unknownOutcomes += 1;
    this.#facts.unknownOutcome = true;
    this.#facts.batch = this.address.tableWrite?.kind === "batch";
  }

  /** A write's answer is one an earlier unknown attempt's success would cause (409 after an insert, ...), and read-back is on. */
  #answerMayBeOurs(result: AttemptResult): boolean {
    if (this.s.ambiguousWrites === undefined || !this.write || this.info.unknownOutcomes === 0) return false;
    const write = this.address.tableWrite;
    return write !== undefined && isAppliedAnswer(write, result);
  }

  /** Carries out a stop (operationEnding.ts): returns or throws what the caller gets. */
  #end(step: StopStep): PipelineResponse {
    this.#waits?.leave();
    const f = this.#facts;
    // Right after an attempt the loop's clock reading will do.
    const endedAt = f.point === "attempt" || f.point === "secondary" ? this.#clock : performance.now();
    const ending = { step, facts: f, last: this.#last, readBack: this.#readBack, abort: this.#abort, refusal: this.refusal };
    return endOperation(this, ending, endedAt - this.started, this.#resuming);
  }
}
