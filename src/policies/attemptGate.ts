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
