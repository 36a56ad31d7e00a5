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
