import type { PipelineRequest, PipelineResponse } from "@azure/core-rest-pipeline";
import type { AmbiguousWriteResult } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { AttemptClass, StopReason } from "../observers/retryEvents.js";

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
  /** Attempts sent to the secondary region (`secondaryReads`, counted in `attempts` too); undefined when none. */
  secondaryAttempts?: number;
  /**
   * True when the answer came from the secondary region: it may be stale, by as much as the
   * account's replication lag (docs/secondary-reads.md). Undefined otherwise.
   */
  answeredBySecondary?: boolean;
}

// Kept on the request object itself, so that the SDK's RestError and PipelineResponse,
// which both carry the same request, lead back to it, and it goes when the request goes.
// A symbol-keyed property rather than a WeakMap: a WeakMap entry per request cost more
// than the rest of the policy's bookkeeping together (ephemerons are slow to set and to
// collect), and a symbol is invisible to JSON, Object.keys and for-in.
const RETRY_INFO: unique symbol = Symbol("azure-storage-resilience.retryInfo");

interface WithRetryInfo {
  [RETRY_INFO]?: RetryInfo;
}

/** Starts the record for a request (internal to the policy). */
export function startRetryInfo(request: PipelineRequest): RetryInfo {
  const info: RetryInfo = { attempts: 0, classes: [], possiblyApplied: false, unknownOutcomes: 0 };
  (request as PipelineRequest & WithRetryInfo)[RETRY_INFO] = info;
  return info;
}

/**
 * Marks the response the policy returns with its operation's record (internal to the
 * policy). Needed for Blob and Queue: their `_response` is a copy of the response whose
 * `request` is a copy too (`@azure/core-http-compat`'s `toCompatResponse`), so the mark on
 * the request is lost; an own enumerable property of the response survives that copy's
 * object spread, as a symbol invisible to JSON, `Object.keys` and for-in.
 */
export function attachRetryInfo(target: PipelineResponse | object, info: RetryInfo): void {
  (target as WithRetryInfo)[RETRY_INFO] = info;
}

/**
 * Marks a result the SDK built afresh (a Tables entity, a write's headers) with its
 * operation's record, as a non-enumerable symbol property: the user's object keeps its
 * keys, its JSON and what a spread copies (internal to the install).
 */
export function attachRetryInfoHidden(target: object, info: RetryInfo): void {
  Object.defineProperty(target, RETRY_INFO, { value: info, configurable: true, writable: true, enumerable: false });
}

/**
 * The attempt count and classifications behind a result, without changing its shape:
 * pass the SDK's `RestError`, a `PipelineResponse` (the raw response from `onResponse`,
 * Blob's and Queue's `result._response`), the result itself, or the `PipelineRequest`.
 * Undefined when the request did not go through the policy.
 */
export function getRetryInfo(source: unknown): RetryInfo | undefined {
  if (typeof source !== "object" || source === null) return undefined;
  return (
    ownRecord(source) ??
    ownRecord((source as { request?: unknown }).request) ??
    // A Blob or Queue result: its non-enumerable `_response` carries the mark.
    ownRecord((source as { _response?: unknown })._response)
  );
}

function ownRecord(value: unknown): RetryInfo | undefined {
  return typeof value === "object" && value !== null ? (value as WithRetryInfo)[RETRY_INFO] : undefined;
}

/**
 * True when `source` (an error, a response or a request) ended a write that may have been
 * applied anyway: see {@link RetryInfo.possiblyApplied}.
 */
export function isPossiblyApplied(source: unknown): boolean {
  return getRetryInfo(source)?.possiblyApplied === true;
}
