import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { detectServiceFromUrl } from "../partition/detectServiceFromUrl.js";
import { extractScope } from "../partition/extractScope.js";
import type { StorageService } from "../partition/partitionScope.js";
import { scopeKey } from "../partition/scopeKey.js";

/** The circuit a request belongs to. */
export interface RequestScope {
  /** The circuit's key, e.g. `"table|acct|orders|2024-06"`. */
  key: string;
  /** The service, for transitions and metrics. */
  service: StorageService;
}

/** Reads a request's scope; undefined means the request bypasses the breaker. */
export interface RequestScopeReader {
  /** The request's scope, read once per operation. */
  read(request: PipelineRequest): RequestScope | undefined;
  /** Forgets the request's scope: its operation has ended. */
  release(request: PipelineRequest): void;
}

/**
 * Makes a {@link RequestScopeReader}: the user's `getScope` when given, else the
 * partition scope from `extractScope`. Remembered per request object until its operation
 * ends, so retries of one operation do not parse a `$batch` body again. (Forgotten at the
 * end because a WeakMap entry left for the garbage collector costs more than the read.)
 * Never throws: a scope that cannot be read costs the breaker's protection for that
 * request, not the request.
 */
export function createRequestScopeReader(
  service: StorageService | undefined,
  getScope: ((request: PipelineRequest) => string | undefined) | undefined,
): RequestScopeReader {
  const cache = new WeakMap<PipelineRequest, RequestScope | null>();
  const read = getScope ? (r: PipelineRequest) => fromUser(r, getScope, service) : (r: PipelineRequest) => fromPartition(r, service);
  return {
    read(request) {
      const cached = cache.get(request);
      if (cached !== undefined) return cached ?? undefined;
      const scope = read(request);
      cache.set(request, scope ?? null);
      return scope;
    },
    release(request) {
      cache.delete(request);
    },
  };
}

function fromPartition(request: PipelineRequest, service: StorageService | undefined): RequestScope | undefined {
  const body = typeof request.body === "string" ? request.body : undefined;
  const scope = extractScope({ method: request.method, url: request.url, body }, service);
  return scope === undefined ? undefined : { key: scopeKey(scope), service: scope.service };
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
