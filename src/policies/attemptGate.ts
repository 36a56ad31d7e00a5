import type { PipelineRequest, PipelineResponse } from "@azure/core-rest-pipeline";
import type { OutcomeClass } from "../classification/outcomeClass.js";

/** One attempt's result as the retry loop sees it. */
export interface AttemptResult {
  response?: PipelineResponse;
  error?: unknown;
  status?: number;
  errorCode?: string;
  outcomeClass: OutcomeClass;
}

/**
 * Something that decides whether an attempt may go to the network (the per-partition
 * circuit breaker). `run` calls `attempt` and returns its result, or rejects with a
 * `CircuitOpenError` without calling it.
 */
export interface AttemptGate {
  /** With `true`, the retry loop waits for the probe time on `CircuitOpenError` instead of failing fast. */
  readonly waitWhenOpen: boolean;
  run(request: PipelineRequest, attempt: () => Promise<AttemptResult>): Promise<AttemptResult>;
}

/**
 * Internal, not exported from the package: a gate with a method under this key is told
 * when the retry loop is done with a request, so it can drop per-operation state at once.
 */
export const operationEnded: unique symbol = Symbol("azure-storage-resilience.operationEnded");

/** A gate that wants to hear when an operation ends (see {@link operationEnded}). */
export interface OperationAwareGate extends AttemptGate {
  [operationEnded](request: PipelineRequest): void;
}

/** True when `gate` wants to hear when an operation ends. */
export function isOperationAwareGate(gate: AttemptGate | undefined): gate is OperationAwareGate {
  return typeof (gate as Partial<OperationAwareGate> | undefined)?.[operationEnded] === "function";
}

/**
 * Internal, not exported from the package: a gate with methods under these keys can let an
 * attempt go out without wrapping it, which saves the success path a promise layer and a
 * closure. `[admitDirectly](request)` returns a ticket when the attempt needs no wrapping
 * (for the breaker: its partition has no circuit), or undefined when the attempt must go
 * through `run`. With a ticket, the retry loop sends the attempt itself, then reports the
 * result with `[settleDirectly](ticket, result)` and awaits what that returns, if anything.
 */
export const admitDirectly: unique symbol = Symbol("azure-storage-resilience.admitDirectly");
export const settleDirectly: unique symbol = Symbol("azure-storage-resilience.settleDirectly");

/** A ticket from {@link admitDirectly}; only the gate that issued it reads it. */
export type DirectTicket = object;

/** A gate that can let attempts out unwrapped (see {@link admitDirectly}). */
export interface DirectGate extends AttemptGate {
  [admitDirectly](request: PipelineRequest): DirectTicket | undefined;
  [settleDirectly](ticket: DirectTicket, result: AttemptResult): Promise<void> | undefined;
}

/** True when `gate` can let attempts out unwrapped. */
export function isDirectGate(gate: AttemptGate | undefined): gate is DirectGate {
  const candidate = gate as Partial<DirectGate> | undefined;
  return typeof candidate?.[admitDirectly] === "function" && typeof candidate[settleDirectly] === "function";
}
