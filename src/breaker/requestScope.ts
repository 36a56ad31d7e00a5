import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { detectServiceFromUrl } from "../partition/detectServiceFromUrl.js";
import type { StorageService } from "../partition/partitionScope.js";
import { requestScopeKey } from "../partition/requestScopeKey.js";

/** The circuit a request belongs to. */
export interface RequestScope {
  /** The circuit's key, e.g. `"table|acct|orders|2024-06"`. */
  key: string;
  /** The service, for transitions and metrics. */
  service: StorageService;
}

/** Reads a request's scope; undefined means the request bypasses the breaker. */
export interface RequestScopeReader {
  /** The request's scope: the same for every attempt of one operation. */
  read(request: PipelineRequest): RequestScope | undefined;
  /** Forgets the request's scope: its operation has ended. */
  release(request: PipelineRequest): void;
}

/**
 * Makes a {@link RequestScopeReader}: the user's `getScope` when given, else the
 * partition scope (`requestScopeKey`). The partition scope is read again on each call,
 * which costs less than remembering it, except where the body decides it (a Tables
 * `$batch` or insert: a POST with a text body), so retries of one operation do not parse
 * that body again. The user's `getScope` is called once per request object. Remembered
 * scopes are forgotten when the operation ends (a WeakMap entry left for the garbage
 * collector costs more than a read). Never throws: a scope that cannot be read costs the
 * breaker's protection for that request, not the request.
 */
export function createRequestScopeReader(
  service: StorageService | undefined,
  getScope: ((request: PipelineRequest) => string | undefined) | undefined,
): RequestScopeReader {
  const cache = new WeakMap<PipelineRequest, RequestScope | null>();
  if (getScope) {
    return {
      read(request) {
        const cached = cache.get(request);
        if (cached !== undefined) return cached ?? undefined;
        const scope = fromUser(request, getScope, service);
        cache.set(request, scope ?? null);
        return scope;
      },
      release(request) {
        cache.delete(request);
      },
    };
  }
  return {
    read(request) {
      if (!mayReadBody(request)) return requestScopeKey(request, service);
      const cached = cache.get(request);
      if (cached !== undefined) return cached ?? undefined;
      const scope = requestScopeKey(request, service);
      // Only a Tables scope is read from the body (a queue message is POSTed as text too).
      if (scope?.service === "table") cache.set(request, scope);
      return scope;
    },
    release(request) {
      if (mayReadBody(request)) cache.delete(request);
    },
  };
}

/** Whether the partition scope may come from the body: a POST with a text body (`$batch`, Tables inserts). */
function mayReadBody(request: PipelineRequest): boolean {
  return request.method === "POST" && typeof request.body === "string";
}

function fromUser(
  request: PipelineRequest,
  getScope: (request: PipelineRequest) => string | undefined,
  service: StorageService | undefined,
): RequestScope | undefined {
  let key: unknown;
  try {
    key = getScope(request);
  } catch {
    return undefined;
  }
  if (typeof key !== "string") return undefined;
  return { key, service: service ?? detectServiceFromUrl(request.url) ?? "table" };
}
