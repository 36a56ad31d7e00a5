import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { AttemptClass, StopReason } from "./retryEvents.js";

/** What the retry policy did for one operation; read it with {@link getRetryInfo}. */
export interface RetryInfo {
  /** Attempts made, counting ones refused by an open circuit. */
  attempts: number;
  /** Each attempt's class, in order. */
  classes: AttemptClass[];
  /** Why the policy stopped (undefined while the operation is in flight). */
  stopReason?: StopReason;
  /** Milliseconds from the first attempt to the end. */
  elapsedInMs?: number;
}

// Keyed by the request so that the SDK's RestError and PipelineResponse, which both carry
// the same request object, lead back to it; and so nothing leaks once the request is gone.
const infos = new WeakMap<PipelineRequest, RetryInfo>();

/** Starts the record for a request (internal to the policy). */
export function startRetryInfo(request: PipelineRequest): RetryInfo {
  const info: RetryInfo = { attempts: 0, classes: [] };
  infos.set(request, info);
  return info;
}

/**
 * The attempt count and classifications behind a result, without changing its shape:
 * pass the SDK's `RestError`, a `PipelineResponse` (e.g. from `onResponse`'s raw response)
 * or the `PipelineRequest`. Undefined when the request did not go through the policy.
 */
export function getRetryInfo(source: unknown): RetryInfo | undefined {
  if (typeof source !== "object" || source === null) return undefined;
  const request = (source as { request?: unknown }).request ?? source;
  return typeof request === "object" && request !== null ? infos.get(request as PipelineRequest) : undefined;
}
