import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress } from "../address/readRequestAddress.js";
import type { RequestAddress } from "../address/requestAddress.js";
import type { StorageService } from "../partition/partitionScope.js";

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
 * Makes a {@link RequestScopeReader}: the user's `getScope` when given, else the request
 * address's scope key. The answer is kept per request until `release`, so the attempts of
 * one operation read the request (or call `getScope`) once. Never throws: a scope that
 * cannot be read costs the breaker's protection for that request, not the request.
 */
export function createRequestScopeReader(
  service: StorageService | undefined,
  getScope: ((request: PipelineRequest) => string | undefined) | undefined,
): RequestScopeReader {
  // Only until the retry loop passes each operation's address to the gate.
  const scopes = new WeakMap<PipelineRequest, RequestScope | null>();
  return {
    read(request) {
      const kept = scopes.get(request);
      if (kept !== undefined) return kept ?? undefined;
      const address = readRequestAddress(request, service);
      const scope = getScope ? fromUser(address, getScope) : fromAddress(address);
      scopes.set(request, scope ?? null);
      return scope;
    },
    release(request) {
      scopes.delete(request);
    },
  };
}

function fromAddress(address: RequestAddress): RequestScope | undefined {
  const key = address.scopeKey;
  const scope = address.scope;
  return key === undefined || scope === undefined ? undefined : { key, service: scope.service };
}

function fromUser(
  address: RequestAddress,
  getScope: (request: PipelineRequest) => string | undefined,
): RequestScope | undefined {
  let key: unknown;
  try {
    key = getScope(address.request);
  } catch {
    return undefined;
  }
  if (typeof key !== "string") return undefined;
  return { key, service: address.service ?? "table" };
}
