// An operation's waits without sending (a circuit's probe, a paced slot, the retry budget, a
// backoff): its place among the caller policy's waiters, what the observers are told, and the
// sleep, which a bounded caller's policy or an opened circuit may cut short. The loop decides
// that it waits (decideNext); this carries the wait out.
import { logger } from "../logging/logger.js";
import type { AttemptClass, LocalWaitReason } from "../observers/retryEvents.js";
import { RELEASED, sleepInSlices, type SleepEnd } from "../timing/sleepInSlices.js";
import { delayUntilWoken } from "../timing/wake.js";
import { SHORT_WAIT_IN_MS, type Step } from "./decideNext.js";
import type { Operation } from "./resilientRetryPolicy.js";

/** How often a wait that may be let go looks again: a quarter second of a worker lost at most. */
const CHECK_EVERY_IN_MS = 250;

/** The caller policy's answer for `op`: may it begin a wait for `reason`, or go on waiting? */
export function callerMay(op: Operation, reason: LocalWaitReason): boolean {
  const waiter = op.waiter;
  return waiter === undefined ? op.caller.mayStartWait(reason) : op.caller.mayKeepWaiting(waiter, reason);
}

/** Sleeps the wait `step` asks for, as one of the caller policy's waiters (it stays one until `leaveWait`). */
export async function sleepFor(op: Operation, step: Step & { action: "wait" }): Promise<SleepEnd> {
  enterWait(op, step.on);
  if (step.on === "backoff" || step.on === "circuit") notifyRetry(op, step);
  if (!op.hooks.listens("onWait")) return sleep(op, step);
  // Timed only for an onWait observer (the tracing one): planned and actual differ when a wait is woken or let go.
  const startedAt = performance.now();
  notifyWaitStep(op, step, undefined, 0);
  const end = await sleep(op, step);
  notifyWaitStep(op, step, end, performance.now() - startedAt);
  return end;
}

function sleep(op: Operation, step: Step & { action: "wait" }): Promise<SleepEnd> | SleepEnd {
  const letGo = letGoOf(op, step.on, step.delayInMs);
  if (letGo?.() === true) return RELEASED;
  const signal = op.request.abortSignal;
  // Ends early when the gate wakes it: the circuit closed (its probe found the partition back), the queue was let out.
  const wake = step.on === "budget" ? undefined : op.wakeFor(step.on);
  return sleepInSlices(step.delayInMs, (ms) => delayUntilWoken(ms, wake, signal), letGo, CHECK_EVERY_IN_MS);
}

/** The operation sends, or ends: it is no longer a waiter. */
export function leaveWait(op: Operation): void {
  const waiter = op.waiter;
  if (waiter === undefined) return;
  op.waiter = undefined;
  op.caller.endWait(waiter);
  notifyWait(op, waiter.reason, "ended");
}

function enterWait(op: Operation, reason: LocalWaitReason): void {
  const waiter = op.waiter;
  if (waiter === undefined) op.waiter = op.caller.beginWait(reason);
  else if (waiter.reason !== reason) {
    notifyWait(op, waiter.reason, "ended");
    op.caller.changeReason(waiter, reason);
  } else return;
  notifyWait(op, reason, "started");
}

/**
 * What cuts a wait short: for a bounded caller, being let go (healthy work needs the slot);
 * for a backoff of a caller that may not wait on a partition, its circuit opening meanwhile
 * (the gate would refuse the retry anyway, and the worker is free the sooner). An open
 * loop's waits are one sleep, one timer. A bounded caller's wait of SHORT_WAIT_IN_MS or less is
 * never let go: decideNext takes it whatever the caller policy says (it holds a worker no longer than an attempt).
 */
function letGoOf(op: Operation, on: LocalWaitReason, delayInMs: number): (() => boolean) | undefined {
  const kind = op.caller.settings.kind;
  if (kind === "open") return undefined;
  const gate = op.s.gate;
  const refusesNow = on === "backoff" ? gate?.refusesNow : undefined;
  const circuitOpened = refusesNow === undefined ? undefined : (): boolean => refusesNow.call(gate, op.address);
  if (kind === "failFast" || delayInMs <= SHORT_WAIT_IN_MS) return circuitOpened;
  const waiter = op.waiter;
  return () => (waiter !== undefined && op.caller.mustRelease(waiter)) || circuitOpened?.() === true;
}

/** One wait begins (`end` undefined) or is over: told to `onWait`. */
function notifyWaitStep(op: Operation, step: Step & { action: "wait" }, end: SleepEnd | undefined, waitedInMs: number): void {
  op.hooks.notify("onWait", {
    request: op.request,
    address: op.address,
    state: end === undefined ? "started" : "ended",
    reason: step.on,
    source: step.on === "backoff" ? step.source : undefined,
    plannedInMs: step.delayInMs,
    waitedInMs: end === undefined ? undefined : waitedInMs,
    ended: end?.ended,
  });
}

function notifyWait(op: Operation, reason: LocalWaitReason, state: "started" | "ended"): void {
  if (op.hooks.listens("onLocalWait")) op.hooks.notify("onLocalWait", { request: op.request, address: op.address, reason, state });
}

/** A backoff or a circuit wait is a retry on its way: logged at verbose and told to `onRetry`. */
function notifyRetry(op: Operation, step: Step & { action: "wait" }): void {
  const failed = step.on === "backoff" ? op.last : undefined;
  const reason: AttemptClass = failed?.outcomeClass ?? "circuit_open";
  const source = step.on === "backoff" ? step.source : "circuit";
  const attempt = op.info.attempts;
  // Verbose: at info the retry log observer (added by installResilience) writes the fuller line.
  if (logger.verbose.enabled) logger.verbose(`Retrying after attempt ${attempt} (${reason}) in ${Math.round(step.delayInMs)} ms (${source}).`);
  if (!op.hooks.listens("onRetry")) return;
  op.hooks.notify("onRetry", {
    request: op.request,
    address: op.address,
    attempt,
    reason,
    status: failed?.status,
    errorCode: failed?.errorCode,
    delayInMs: step.delayInMs,
    delaySource: source,
  });
}
