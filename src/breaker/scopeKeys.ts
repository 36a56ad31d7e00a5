// Which breaker scope an operation's address maps to, under the breaker's own options.
import type { RequestAddress } from "../address/requestAddress.js";
import type { StorageService } from "../address/partitionScope.js";
import type { PartitionBreakerOptions } from "./partitionBreakerOptions.js";

/**
 * The scope key reader of one breaker: the address's own key, unless a user `getScope` or this
 * breaker's `service` (where the policy gave none, as for Azurite's path-style URLs) says otherwise;
 * then the key is read once per operation and kept with its address.
 */
export function createScopeKeyReader(
  getScope: PartitionBreakerOptions["getScope"],
  service: StorageService | undefined,
): (address: RequestAddress) => string | undefined {
  const ownKeys = new WeakMap<RequestAddress, string | undefined>();
  const readOwnKey = (address: RequestAddress): string | undefined => {
    if (getScope === undefined) return address.under(service).scopeKey;
    try {
      const key = getScope(address.request);
      return typeof key === "string" ? key : undefined;
    } catch {
      // A scope that cannot be read costs that request the breaker's protection, not the request.
      return undefined;
    }
  };
  return (address) => {
    if (getScope === undefined && (service === undefined || address.service === service)) return address.scopeKey;
    if (ownKeys.has(address)) return ownKeys.get(address);
    const key = readOwnKey(address);
    ownKeys.set(address, key);
    return key;
  };
}
