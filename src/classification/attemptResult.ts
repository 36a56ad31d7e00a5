import type { PipelineResponse } from "@azure/core-rest-pipeline";
import type { OutcomeClass } from "./outcomeClass.js";

/** One attempt's result as the retry loop sees it: what came back, and its class. */
export interface AttemptResult {
  response?: PipelineResponse;
  error?: unknown;
  status?: number;
  errorCode?: string;
  outcomeClass: OutcomeClass;
}
