import { classifyNetworkError, errorCodeOf, isAbortError } from "./networkErrors.js";
import type { OutcomeClass } from "./outcomeClass.js";
import { applyClassificationRules, type ClassificationRules } from "./classificationRules.js";

/**
 * Classifies one attempt's outcome by the built-in table ({@link OutcomeClass}, docs/retry.md):
 * network errors are transient or timeout, an abort `aborted`, anything unknown permanent.
 * `rules` extend or override the table.
 */
export function classify(
  outcome: {
    /** HTTP status of the response, when there was one. */
    status?: number;
    /** The `x-ms-error-code` header of the response (or the storage error code). */
    errorCode?: string;
    /** The error thrown by the attempt, when it threw. */
    error?: unknown;
  },
  rules?: ClassificationRules,
): OutcomeClass {
  const status = outcome.status ?? statusOfError(outcome.error);
  const errorCode = outcome.errorCode ?? errorCodeOf(outcome.error);
  const builtIn = classifyBuiltIn(status, errorCode, outcome.error);
  return rules ? applyClassificationRules({ ...outcome, status }, builtIn, errorCode, rules) : builtIn;
}

function classifyBuiltIn(status: number | undefined, errorCode: string | undefined, error: unknown): OutcomeClass {
  if (status !== undefined) return classifyStatus(status, errorCode);
  if (error === undefined) return "success";
  if (isAbortError(error)) return "aborted";
  return classifyNetworkError(error) ?? "permanent";
}

/** The built-in table for an HTTP status and its `x-ms-error-code`. */
function classifyStatus(status: number, errorCode?: string): OutcomeClass {
  if (status < 400) return "success";
  if (status === 429 || status === 503) return "throttled";
  if (status === 408 || status === 504) return "timeout";
  if (status === 501 || status === 505) return "permanent";
  if (status >= 500) {
    if (errorCode === "OperationTimedOut") return "timeout";
    if (errorCode === "ServerBusy") return "throttled";
    return "transient";
  }
  return "permanent";
}

/** A `RestError` carries the response's status as `statusCode`. */
function statusOfError(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const statusCode = (error as { statusCode?: unknown }).statusCode;
  return typeof statusCode === "number" ? statusCode : undefined;
}

/** One attempt's outcome as {@link classify} reads it (spelt out in its signature: the public API names no more types than it must). */
export type AttemptOutcome = Parameters<typeof classify>[0];
