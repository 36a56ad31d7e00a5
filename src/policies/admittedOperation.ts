// An operation as the attempt gate, the retry budget and the observers see it: its request and
// record, the admission its next attempt goes on, its place in a scope's queue while it waits (given
// back when it is not sent on), the retries it spends, and each attempt as it is recorded.
// It carries out decideNext's `admit` and `take-retry` steps and writes what the gate and the
// budget answered into the facts; it decides nothing. A base class of Operation rather than a
// field: one object per operation, not two, and this state stays private.
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import { isWriteMethod } from "../address/requestMethod.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import type { ObserverHooks } from "../observers/observerHooks.js";
import type { AttemptClass } from "../observers/retryEvents.js";
import { startRetryInfo, type RetryInfo } from "./retryInfo.js";
import { SEND_NOW, type Admission, type Refusal, type Send, type Wait } from "../breaker/attemptGate.js";
import type { RetryBudget } from "../flow/retryBudget.js";
import type { DecisionFacts } from "./decisionFacts.js";
import type { RetryPolicySettings } from "./retryPolicyOptions.js";
import type { WakeSource } from "../timing/wake.js";

/** How soon an operation deferring on an empty budget asks it again, at the least. */
const MIN_BUDGET_POLL_IN_MS = 10;

/** The record, gate and budget half of an operation; {@link Operation} is the loop over it. */
export abstract class AdmittedOperation {
  readonly request: PipelineRequest;
  readonly s: RetryPolicySettings;
  readonly hooks: ObserverHooks;
  readonly address: RequestAddress;
  readonly started = performance.now();
  /** What the policy did for the operation, as `getRetryInfo` reads it. */
  readonly info: RetryInfo;
  readonly write: boolean;
  /** What the gate last let go: the next attempt is sent on it. */
  #sent: Send = SEND_NOW;
  /** The wait the gate handed this operation last: asked again, it keeps the operation's place. */
  #waited: Wait | undefined;
  /** The waits for the gate before the attempt in hand, summed. */
  #pacedDelayInMs = 0;
  #lastPaced = false;
  #lastProbe = false;
  /** The attempt in flight spent a retry of the budget (given back if it succeeds). */
  #spentRetry = false;
  #refusal: Refusal | undefined;

  constructor(request: PipelineRequest, s: RetryPolicySettings, hooks: ObserverHooks) {
    this.request = request;
    this.s = s;
    this.hooks = hooks;
    this.address = readRequestAddress(request, s.service, s.entityOperationNames);
    this.info = startRetryInfo(request);
    this.write = isWriteMethod(request.method);
  }

  /** The gate's last refusal, for the error a refused operation surfaces. */
  protected get refusal(): Refusal | undefined {
    return this.#refusal;
  }

  /**
   * What ends a wait early, if anything: for a circuit or a pacing wait, its turn (the gate's last
   * answer); for a backoff, the partition the attempt failed on going out or coming back; nothing
   * for the budget.
   */
  protected wakeFor(on: "circuit" | "pacing" | "backoff" | "budget"): WakeSource | undefined {
    if (on === "budget") return undefined;
    return on === "backoff" ? this.s.gate?.wakeOf?.(this.address) : this.#waited?.wake;
  }

  /** Whether the last primary attempt was a half-open circuit's probe. */
  protected get lastWasProbe(): boolean {
    return this.#lastProbe;
  }

  /** Whether the last primary attempt went on a paced admission (its retry goes paced again, free of the budget). */
  protected get lastWasPaced(): boolean {
    return this.#lastPaced;
  }

  /** The wait for the paced slot the next attempt goes on (0 when none). */
  protected get pacedDelayInMs(): number {
    return this.#pacedDelayInMs;
  }

  /**
   * `admit`: asks the gate for the next attempt, which it may queue up to `queueForInMs`, and writes
   * its answer into `f`. Returns the refusal.
   */
  protected admit(f: DecisionFacts, queueForInMs: number): Refusal | undefined {
    const gate = this.s.gate;
    const admission: Admission = gate === undefined ? SEND_NOW : gate.admit(this.address, { queueForInMs, retry: f.retry, waited: this.#waited });
    f.point = "gate";
    f.paced = admission.decision === "send" && admission.paced === true;
    if (admission.decision === "send") {
      this.#sent = admission;
      this.#refusal = undefined;
      this.#waited = undefined;
      f.gate = "send";
      f.gateDelayInMs = 0;
      return undefined;
    }
    if (admission.decision === "wait") {
      this.#waited = admission;
      f.gate = admission.reason === "circuit" ? "wait-circuit" : "wait-pacing";
      f.gateDelayInMs = admission.delayInMs;
      return undefined;
    }
    this.#waited = undefined;
    this.#pacedDelayInMs = 0;
    this.#refusal = admission;
    f.gate = admission.reason === "paced" ? "paced" : "circuit-open";
    f.gateDelayInMs = admission.retryAfterInMs;
    return admission;
  }

  /**
   * `take-retry`: spends a retry of the budget for the send about to go on the gate's admission;
   * refused, the admission is given back (it is not sent on, whatever comes next) and `f` says
   * the budget is empty and when it may refill.
   */
  protected takeRetry(f: DecisionFacts): void {
    const budget = this.s.budget as RetryBudget;
    f.point = "budget";
    if (budget.tryRetry()) {
      f.budget = "available";
      this.#spentRetry = true;
      return;
    }
    this.s.gate?.release?.(this.address, this.#sent);
    this.#sent = SEND_NOW;
    this.#pacedDelayInMs = 0;
    f.budget = "empty";
    // A floor: a budget that refuses while answering 0 (the RetryBudget interface allows it) must not make the loop spin.
    f.budgetRetryAfterInMs = Math.max(MIN_BUDGET_POLL_IN_MS, budget.retryAfterInMs());
    f.jitter = this.s.random();
  }

  /** The budget's answer for a retry, read without spending (none asked for a first attempt). */
  protected readBudget(f: DecisionFacts): void {
    const budget = this.s.budget;
    f.budgetRetryAfterInMs = budget !== undefined && f.retry ? budget.retryAfterInMs() : 0;
    f.budget = budget === undefined || !f.retry ? "free" : f.budgetRetryAfterInMs > 0 ? "empty" : "available";
  }

  /** Waiting for the gate: the wait counts toward the next attempt's paced delay. */
  protected waitedForGate(delayInMs: number): void {
    this.#pacedDelayInMs += delayInMs;
  }

  /** The operation ends while it waits for the gate: its place in the queue goes back. */
  protected leaveQueue(): void {
    const waited = this.#waited;
    if (waited === undefined) return;
    this.#waited = undefined;
    this.s.gate?.release?.(this.address, waited);
  }

  /** An attempt made (or refused by a circuit): counted in the record, and told to `onAttempt`. */
  protected recordAttempt(attemptClass: AttemptClass, durationInMs: number, result: AttemptResult | undefined, pacedDelayInMs = 0, secondary = false): void {
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

  /** A primary attempt came back: the gate learns from it, and a successful retry gives its budget back. Returns the paced wait it went after. */
  protected recordAdmitted(result: AttemptResult): number {
    const admission = this.#sent;
    this.s.gate?.record(this.address, admission, result);
    if (this.#spentRetry && result.outcomeClass === "success") this.s.budget?.refund?.();
    this.#spentRetry = false;
    this.#lastPaced = admission.paced === true;
    this.#lastProbe = admission.probe === true;
    const pacedDelayInMs = this.#pacedDelayInMs;
    this.#pacedDelayInMs = 0;
    return pacedDelayInMs;
  }
}

