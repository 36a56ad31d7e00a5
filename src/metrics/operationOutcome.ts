import type { StopReason } from "../observers/retryEvents.js";
import type { OperationOutcome } from "./metricNames.js";

/** How an operation's stop reason reads as its outcome, in both sinks. */
const OUTCOME_BY_STOP_REASON: Readonly<Record<StopReason, OperationOutcome>> = {
  success: "success",
  aborted: "aborted",
  "circuit-open": "circuit_open",
  permanent: "failure",
  "retries-exhausted": "failure",
  deadline: "failure",
  "body-not-replayable": "failure",
  "budget-exhausted": "failure",
  "partition-busy": "partition_busy",
  "caller-busy": "failure",
};

/** Stop reasons that mean "gave up on a retriable failure": retries, deadline or retry budget spent. */
const EXHAUSTED_STOP_REASONS: ReadonlySet<StopReason> = new Set<StopReason>(["retries-exhausted", "deadline", "budget-exhausted"]);

/** The `outcome` an operation that stopped for `stopReason` counts under; `failure` for a reason this version does not know. */
export function outcomeOf(stopReason: StopReason): OperationOutcome {
  return OUTCOME_BY_STOP_REASON[stopReason] ?? "failure";
}

/** Whether the operation gave up on a retriable failure (counted as exhausted). */
export function isExhausted(stopReason: StopReason): boolean {
  return EXHAUSTED_STOP_REASONS.has(stopReason);
}
