// An operation's waits without sending (a circuit's probe, a paced slot, the retry budget, a
// backoff): its place among the caller policy's waiters, what the observers are told, and the
// sleep. decideNext decides that it waits, how long, and what may cut the wait short (the wait
// step's `releasable` and `untilRefused`); this carries the wait out.
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { RequestAddress } from "../address/requestAddress.js";
import type { AttemptGate } from "../breaker/attemptGate.js";
import type { AttemptResult } from "../classification/attemptResult.js";
import { logger } from "../logging/logger.js";
import type { ObserverHooks } from "../observers/observerHooks.js";
import type { AttemptClass, LocalWaitReason } from "../observers/retryEvents.js";
import { RELEASED, sleepInSlices, type SleepEnd } from "../timing/sleepInSlices.js";
import { delayUntilWoken, type WakeSource } from "../timing/wake.js";
import type { CallerPolicy, Waiter } from "./callerPolicy.js";
import type { WaitStep } from "./decideNext.js";

/** How a wait cut by a throw is told as over (the throw goes on to the loop). */
const ABORTED: SleepEnd = Object.freeze({ ended: "aborted", error: undefined });

/** How often a wait that may be let go looks again: a quarter second of a worker lost at most. */
const CHECK_EVERY_IN_MS = 250;

/** One operation's waits: made at its first wait, it holds the operation's place among the caller policy's waiters. */
export class OperationWaits {
  readonly #caller: CallerPolicy;
  readonly #hooks: ObserverHooks;
  readonly #request: PipelineRequest;
  readonly #address: RequestAddress;
  readonly #gate: AttemptGate | undefined;
  #waiter: Waiter | undefined;

  constructor(caller: CallerPolicy, hooks: ObserverHooks, request: PipelineRequest, address: RequestAddress, gate: AttemptGate | undefined) {
    this.#caller = caller;
    this.#hooks = hooks;
    this.#request = request;
    this.#address = address;
    this.#gate = gate;
  }

  /** The caller policy's answer: may the operation begin a wait for `reason`, or go on waiting? */
  mayWait(reason: LocalWaitReason): boolean {
    const waiter = this.#waiter;
    return waiter === undefined ? this.#caller.mayStartWait(reason) : this.#caller.mayKeepWaiting(waiter, reason);
  }

  /**
   * Sleeps the wait `step` asks for, as one of the caller policy's waiters (it stays one until
   * {@link leave}), ended early by `wake` (what it waits for has come) or as the step allows.
   * `attempt` and `failed` (the last failure, for a backoff) are what `onRetry` is told.
   */
  async sleep(step: WaitStep, wake: WakeSource | undefined, attempt: number, failed: AttemptResult | undefined): Promise<SleepEnd> {
    this.#enter(step.on);
    if (step.on === "backoff" || step.on === "circuit") this.#notifyRetry(step, attempt, step.on === "backoff" ? failed : undefined);
    if (!this.#hooks.listens("onLocalWait")) return this.#sleep(step, wake);
    // Timed only for an onLocalWait observer: planned and actual differ when a wait is woken or let go.
    const startedAt = performance.now();
    this.#notifyWait(step, undefined, 0);
    let end: SleepEnd = ABORTED;
    try {
      end = await this.#sleep(step, wake);
      return end;
    } finally {
      // Told even when a check between slices threw: the local-wait gauge must come back down.
      this.#notifyWait(step, end, performance.now() - startedAt);
    }
  }

  #sleep(step: WaitStep, wake: WakeSource | undefined): Promise<SleepEnd> | SleepEnd {
    const letGo = this.#letGoOf(step);
    if (letGo?.() === true) return RELEASED;
    const signal = this.#request.abortSignal;
    return sleepInSlices(step.delayInMs, (ms) => delayUntilWoken(ms, wake, signal), letGo, CHECK_EVERY_IN_MS);
  }

  /** The operation sends, or ends: it is no longer a waiter. */
  leave(): void {
    const waiter = this.#waiter;
    if (waiter === undefined) return;
    this.#waiter = undefined;
    this.#caller.endWait(waiter);
  }

  #enter(reason: LocalWaitReason): void {
    const waiter = this.#waiter;
    if (waiter === undefined) this.#waiter = this.#caller.beginWait(reason);
    else if (waiter.reason !== reason) this.#caller.changeReason(waiter, reason);
  }

  /** What the step allows to cut the wait short, checked between slices; undefined: one sleep, one timer. */
  #letGoOf(step: WaitStep): (() => boolean) | undefined {
    const gate = this.#gate;
    const circuitOpened = step.untilRefused === true && gate?.refusesNow !== undefined ? (): boolean => gate.refusesNow?.(this.#address) === true : undefined;
    if (step.releasable !== true) return circuitOpened;
    const waiter = this.#waiter as Waiter;
    return () => this.#caller.mustRelease(waiter) || circuitOpened?.() === true;
  }

  /** One wait begins (`end` undefined) or is over: told to `onLocalWait`. */
  #notifyWait(step: WaitStep, end: SleepEnd | undefined, waitedInMs: number): void {
    this.#hooks.notify("onLocalWait", {
      request: this.#request,
      address: this.#address,
      state: end === undefined ? "started" : "ended",
      reason: step.on,
      source: step.on === "backoff" ? step.source : undefined,
      plannedInMs: step.delayInMs,
      waitedInMs: end === undefined ? undefined : waitedInMs,
      ended: end?.ended,
    });
  }

  /** A backoff or a circuit wait is a retry on its way: logged at verbose and told to `onRetry`. */
  #notifyRetry(step: WaitStep, attempt: number, failed: AttemptResult | undefined): void {
    const reason: AttemptClass = failed?.outcomeClass ?? "circuit_open";
    const source = step.on === "backoff" ? step.source : "circuit";
    // Verbose: at info the retry log observer (added by installResilience) writes the fuller line.
    if (logger.verbose.enabled) logger.verbose(`Retrying after attempt ${attempt} (${reason}) in ${Math.round(step.delayInMs)} ms (${source}).`);
    if (!this.#hooks.listens("onRetry")) return;
    this.#hooks.notify("onRetry", {
      request: this.#request,
      address: this.#address,
      attempt,
      reason,
      status: failed?.status,
      errorCode: failed?.errorCode,
      delayInMs: step.delayInMs,
      delaySource: source,
    });
  }
}
