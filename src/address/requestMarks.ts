// Every mark the package leaves on objects it does not own (the caller's request, the response or
// error the caller gets) is written and undone only here:
// 1. The operation's RetryInfo (RETRY_INFO): on the request when the operation starts, on the response
//    it returns and on an error that has no request (policies/operationEnding.ts). Never undone.
// 2. `request.abortSignal`: the attempt's own while it runs, the caller's put back when it ends.
// 3. `request.url`: the secondary's for one attempt, the primary's put back when it ends, so the
//    operation's address stays the primary's.
// 4. A write's read-back route, under a symbol per read-back policy's routes, so two installs never
//    see each other's (ambiguousWrites/readBackRoutes.ts). Never undone.
// 5. A RestError's request, given (non-enumerable) to one thrown without it. Never undone.
// Nothing is written on a client or its methods, nor on results the SDK builds afresh.
// In address/ because every folder that marks imports it (policies/, ambiguousWrites/).
//
// Symbol-keyed properties rather than WeakMaps: a WeakMap entry per request costs more than the rest
// of the policy's bookkeeping together (ephemerons are slow to set and to collect), and a symbol is
// invisible to JSON, Object.keys and for-in, so a logged request carries none of this along.
import { isRestError, type PipelineRequest } from "@azure/core-rest-pipeline";
import type { AbortSignalLike } from "@azure/abort-controller";

const RETRY_INFO: unique symbol = Symbol("azure-storage-resilience.retryInfo");

interface WithRetryInfo {
  [RETRY_INFO]?: object;
}

/**
 * Marks `target` (the operation's request, the response the policy returns, an error) with its
 * operation's record, as an own enumerable symbol property. Blob and Queue need the response's:
 * their `_response` is a copy of the response whose `request` is a copy too
 * (`@azure/core-http-compat`'s `toCompatResponse`), so the mark on the request is lost; an own
 * enumerable property survives that copy's object spread.
 */
export function attachRetryInfo(target: PipelineRequest | object, info: object): void {
  (target as WithRetryInfo)[RETRY_INFO] = info;
}

/**
 * Marks `error` with its operation's record when it carries no request (ours, or a network error the
 * SDK did not wrap); an error with a request is found through it. Returns `error`, to be thrown.
 */
export function withRecord<E>(error: E, info: object): E {
  if (typeof error === "object" && error !== null && !("request" in error) && Object.isExtensible(error)) attachRetryInfo(error, info);
  return error;
}

/** The record marked on `value` itself, if any (its type is the caller's: RetryInfo). */
export function retryInfoMarkOf<T extends object>(value: unknown): T | undefined {
  return typeof value === "object" && value !== null ? ((value as WithRetryInfo)[RETRY_INFO] as T | undefined) : undefined;
}

/** Gives `request` the abort signal an attempt runs on (its own, or the caller's put back). */
export function setAttemptSignal(request: PipelineRequest, signal: AbortSignalLike | undefined): void {
  request.abortSignal = signal;
}

/** Points `request` at `url` (the secondary's, or the primary's put back); answers the URL it had. */
export function pointRequestAt(request: PipelineRequest, url: string): string {
  const previous = request.url;
  request.url = url;
  return previous;
}

/** A mark of one owner's own on requests (its symbol made here, once per owner): write it, read it. */
export interface RequestMark<T> {
  set(request: PipelineRequest, value: T): void;
  get(request: PipelineRequest): T | undefined;
}

/** A new {@link RequestMark} under a symbol named `name`, seen by no other mark. */
export function createRequestMark<T>(name: string): RequestMark<T> {
  const key: unique symbol = Symbol(name);
  type Marked = PipelineRequest & { [key]?: T };
  return {
    set(request, value) {
      (request as Marked)[key] = value;
    },
    get(request) {
      return (request as Marked)[key];
    },
  };
}

/**
 * Gives a `RestError` thrown without its request (the Node HTTP client's `PARSE_ERROR` for a body
 * cut while being read) the request it belongs to, so that `getRetryInfo(error)` finds the
 * operation's record when it reaches the caller.
 * Non-enumerable, as `RestError` keeps it, so it is not logged by accident.
 */
export function attachRequestToError(thrown: unknown, request: PipelineRequest): void {
  if (!isRestError(thrown) || thrown.request !== undefined) return;
  const own = Object.getOwnPropertyDescriptor(thrown, "request");
  if (own === undefined ? !Object.isExtensible(thrown) : !own.configurable) return;
  Object.defineProperty(thrown, "request", { value: request, enumerable: false, writable: true, configurable: true });
}
