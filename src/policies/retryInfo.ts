import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { AttemptClass, StopReason } from "../observers/retryEvents.js";
import { attachRetryInfo, retryInfoMarkOf } from "../address/requestMarks.js";

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
  /**
   * True when this write may have been applied although the result says otherwise: an
   * attempt's outcome was unknown (reset, timeout, 500 OperationTimedOut) and the policy
   * could not settle it by reading back, or it is a `$batch`. Check the store before
   * writing again. False otherwise.
   */
  possiblyApplied: boolean;
  /** Attempts whose outcome was unknown: the request may have reached the store. */
  unknownOutcomes: number;
  /**
   * When the operation ended because of its partition's state (an open circuit, a paced
   * queue): milliseconds until the partition may take an attempt again.
   */
  retryAfterInMs?: number;
  /** How an ambiguous write was settled, when it needed settling (see docs/data-safety.md). */
  ambiguousWrite?: AmbiguousWriteResult;
  /**
   * Times the body of a blob download was cut while being read and the rest of its range
   * requested again (docs/retry.md, "Downloads cut mid-body"); each resume's attempts count in
   * `attempts` too. Undefined when none.
   */
  resumes?: number;
  /** Attempts sent to the secondary region (`secondaryReads`, counted in `attempts` too); undefined when none. */
  secondaryAttempts?: number;
  /**
   * True when the answer came from the secondary region: it may be stale, by as much as the
   * account's replication lag (docs/secondary-reads.md). Undefined otherwise.
   */
  answeredBySecondary?: boolean;
}

/** Starts the record for a request and marks the request with it (address/requestMarks.ts; internal to the policy). */
export function startRetryInfo(request: PipelineRequest): RetryInfo {
  const info: RetryInfo = { attempts: 0, classes: [], possiblyApplied: false, unknownOutcomes: 0 };
  attachRetryInfo(request, info);
  return info;
}

/**
 * What the retry policy did for one operation, read from what the SDK hands the caller: an error
 * (the SDK's `RestError`, or the package's own); a raw response (on Tables the one the
 * `onResponse` operation option receives; on Blob and Queue a result's `_response`, or the result
 * itself); or the `PipelineRequest` (an observer's `event.request`). A Tables result (an entity, a
 * write's headers) is built afresh by the SDK with no link to its request: it answers undefined,
 * as does a request that did not go through the policy (docs/troubleshooting.md).
 *
 * @example
 * ```ts
 * let raw: PipelineResponse | undefined;
 * const entity = await tableClient.getEntity("p1", "r1", { onResponse: (response) => (raw = response) });
 * getRetryInfo(raw); // { attempts: 2, classes: ["throttled", "success"], stopReason: "success", ... }
 * ```
 */
export function getRetryInfo(source: unknown): RetryInfo | undefined {
  if (typeof source !== "object" || source === null) return undefined;
  return (
    retryInfoMarkOf<RetryInfo>(source) ??
    // A raw response or an error: the mark is on the request the policy was given.
    retryInfoMarkOf<RetryInfo>((source as { request?: unknown }).request) ??
    // A Blob or Queue result: its non-enumerable `_response` carries the mark.
    retryInfoMarkOf<RetryInfo>((source as { _response?: unknown })._response)
  );
}
