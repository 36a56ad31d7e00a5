// An operation as the attempt gate and the retry budget see it: the admission its next attempt
// goes on, a paced slot held while it is waited for (and given back when it is not sent on), and
// the retries it spends. It fills the gate's and the budget's facts for decideNext; the loop
// (resilientRetryPolicy.ts) fills the rest. A base class of Operation rather than a field: one
// object per operation, not two, and this state stays private to this file.
import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { SEND_NOW, type Admission, type Refusal, type SendAdmission } from "../breaker/attemptGate.js";
import type { RetryBudget } from "../flow/retryBudget.js";
import { SHORT_WAIT_IN_MS, type DecisionFacts } from "./decideNext.js";
import type { RetryPolicySettings } from "./retryPolicyOptions.js";
import type { WakeSource } from "../timing/wake.js";

/** How soon an operation deferring on an empty budget asks it again, at the least. */
const MIN_BUDGET_POLL_IN_MS = 10;

/** The gate and budget half of an operation; {@link Operation} is the loop over it. */
export abstract class AdmittedOperation {
  readonly s: RetryPolicySettings;
  readonly address: RequestAddress;
  /** What the gate last answered: the next attempt is sent on it. */
  #admission: Admission = SEND_NOW;
  /** A paced slot waited for, to be confirmed by the gate. */
  #reserved: SendAdmission | undefined;
  #pacedDelayInMs = 0;
  #lastPaced = false;
  #lastProbe = false;
  /** The attempt in flight spent a retry of the budget (given back if it succeeds). */
  #spentRetry = false;
  #refusal: Refusal | undefined;

  constructor(s: RetryPolicySettings, address: RequestAddress) {
    this.s = s;
    this.address = address;
  }

  /** The gate's last refusal, for the error a refused operation surfaces. */
  get refusal(): Refusal | undefined {
    return this.#refusal;
  }

  /**
   * What may end a wait early, if anything: for a circuit or a paced slot, the gate's last answer
   * (its circuit closing, its queue let out); for a backoff, the partition the attempt failed on
   * (the same, for a retry the gate would now let go at once).
   */
  wakeFor(on: "circuit" | "pacing" | "backoff"): WakeSource | undefined {
    return on === "backoff" ? this.s.gate?.wakeOf?.(this.address) : this.#admission.wake;
  }

  /** Whether the last primary attempt was a half-open circuit's probe. */
  get lastWasProbe(): boolean {
    return this.#lastProbe;
  }

  /** The wait for the paced slot the next attempt goes on (0 when none). */
  get pacedDelayInMs(): number {
    return this.#pacedDelayInMs;
  }

  /**
   * Asks the gate for the next attempt (time left and whether the caller may wait are in `f`),
   * then, for a `retry` sent now on an unpaced admission, spends a retry of the budget (a paced
   * one is not counted: the gate contract). Fills the facts' gate and budget answers; returns the refusal.
   */
  protected admitNext(f: DecisionFacts, retry: boolean): Refusal | undefined {
    f.budget = "free";
    f.budgetRetryAfterInMs = 0;
    const reserved = this.#reserved;
    const admission = this.#admit(f.remainingInMs, f.callerMayWait);
    this.#admission = admission;
    if (admission.decision === "send") {
      this.#refusal = undefined;
      f.gate = "send";
      f.gateDelayInMs = reserved === undefined || isRestOfWait(admission, reserved) ? admission.delayInMs : 0;
      // Spent when the retry goes, i.e. now unless it first waits for its slot (then at the confirmation).
      if (f.gateDelayInMs === 0 && retry && this.s.budget !== undefined && admission.paced !== true) this.#takeRetry(f, admission);
      return undefined;
    }
    this.#pacedDelayInMs = 0;
    this.#refusal = admission;
    f.gate = admission.reason === "paced" ? "paced" : admission.probeOut === true ? "probe-out" : "circuit-open";
    f.gateDelayInMs = admission.retryAfterInMs;
    return admission;
  }

  #admit(remainingInMs: number, mayWait: boolean): Admission {
    const gate = this.s.gate;
    if (gate === undefined) return SEND_NOW;
    const reserved = this.#reserved;
    this.#reserved = undefined;
    // A caller that may not wait takes only a paced slot that is about to come.
    return gate.admit(this.address, mayWait ? remainingInMs : Math.min(remainingInMs, SHORT_WAIT_IN_MS), reserved);
  }

  /**
   * Spends a retry of the budget for the send about to go on `admission`; refused, the admission
   * is given back and the facts say the budget is empty (decideNext defers or stops as the caller may).
   */
  #takeRetry(f: DecisionFacts, admission: SendAdmission): void {
    const budget = this.s.budget as RetryBudget;
    if (budget.tryRetry()) {
      f.budget = "available";
      this.#spentRetry = true;
      return;
    }
    this.s.gate?.abandon?.(this.address, admission);
    this.#admission = SEND_NOW;
    this.#pacedDelayInMs = 0;
    f.gate = "not-asked";
    f.gateDelayInMs = 0;
    f.budget = "empty";
    // A floor: a budget that refuses while answering 0 (the RetryBudget interface allows it) must not make the loop spin.
    f.budgetRetryAfterInMs = Math.max(MIN_BUDGET_POLL_IN_MS, budget.retryAfterInMs());
    f.jitter = this.s.random();
  }

  /** Waiting for a paced slot: it is kept for the gate to confirm at the next ask. */
  protected reserveSlot(delayInMs: number): void {
    this.#reserved = this.#admission as SendAdmission;
    // A slot waited for in slices: its attempt's paced delay is their sum.
    this.#pacedDelayInMs += delayInMs;
  }

  /** A paced slot waited for but not to be sent on: the gate takes back what it holds (a probe). */
  protected abandonReserved(): void {
    const reserved = this.#reserved;
    if (reserved === undefined) return;
    this.#reserved = undefined;
    this.s.gate?.abandon?.(this.address, reserved);
  }

  /** A primary attempt came back: the gate learns from it, and a successful retry gives its budget back. Returns the paced wait it went after. */
  protected recordAdmitted(result: AttemptResult): number {
    const admission = this.#admission as SendAdmission;
    this.s.gate?.record(this.address, admission, result);
    if (this.#spentRetry && result.outcomeClass === "success") this.s.budget?.refund?.();
    this.#spentRetry = false;
    this.#lastPaced = admission.paced === true;
    this.#lastProbe = admission.probe === true;
    const pacedDelayInMs = this.#pacedDelayInMs;
    this.#pacedDelayInMs = 0;
    return pacedDelayInMs;
  }

  /**
   * After a failed primary attempt: a forecast from the admission it went on (a paced partition's
   * retry goes paced again, free); the retry's own admission decides when it is sent (admitNext).
   */
  protected forecastBudget(f: DecisionFacts, retriable: boolean): void {
    const budget = this.s.budget;
    const needsBudget = retriable && budget !== undefined && !this.#lastPaced;
    f.budgetRetryAfterInMs = needsBudget ? budget.retryAfterInMs() : 0;
    f.budget = !needsBudget ? "free" : f.budgetRetryAfterInMs > 0 ? "empty" : "available";
  }

  /** After a refusal: a `retry` read from the secondary needs the budget (spent when it goes); with none left it waits for the primary. */
  protected secondaryBudgeted(f: DecisionFacts, retry: boolean): boolean {
    const budget = this.s.budget;
    if (budget === undefined || !retry) return true;
    if (budget.retryAfterInMs() > 0) return false;
    f.budget = "available";
    return true;
  }

  /**
   * A read sent to the secondary as a `retry` (the operation has made an attempt) is one the gate
   * does not pace: spent as it goes, whatever the primary's last admission was (a paced primary's
   * retries are free; the secondary's never are). Decided on `secondaryBudgeted`'s answer, so the
   * built-in budget grants it; a budget of one's own that refuses here lets this read go uncounted.
   */
  protected spendSecondaryRetry(retry: boolean): void {
    if (retry) this.s.budget?.tryRetry();
  }
}

/**
 * Whether the gate's answer to a paced slot asked about again is the rest of its wait (the same
 * ticket object, a new admission, a delay): a gate may hand a long wait out in slices. Anything
 * else confirms the slot: its delay was spent. A ticket that is not an object (a string, a
 * number) is not one slot's own, and confirms.
 */
function isRestOfWait(admission: SendAdmission, reserved: SendAdmission): boolean {
  const ticket = admission.ticket;
  return admission !== reserved && admission.delayInMs > 0 && typeof ticket === "object" && ticket !== null && ticket === reserved.ticket;
}
