import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { RequestAddress } from "../address/requestAddress.js";
import type { PartitionBreakerOptions } from "./partitionBreakerOptions.js";

/** The scopes an operation's attempts go under: its partition's, and its account's (`service|account`) when it has one. */
export interface ScopeKeys {
  readonly partition: string;
  readonly account: string | undefined;
  readonly service: StorageService;
}

/**
 * The key reader of one breaker: the address read under this breaker's `service` (where the policy
 * gave none, as for Azurite's path-style URLs), keyed by a user `getScope` when there is one. Read
 * once per operation and kept with its address; undefined: the request bypasses the breaker.
 */
export function createScopeKeyReader(getScope: PartitionBreakerOptions["getScope"], service: StorageService | undefined): (address: RequestAddress) => ScopeKeys | undefined {
  const read = new WeakMap<RequestAddress, ScopeKeys | undefined>();
  const partitionKeyOf = (address: RequestAddress): string | undefined => {
    if (getScope === undefined) return address.scopeKey;
    try {
      const key = getScope(address.request);
      return typeof key === "string" ? key : undefined;
    } catch {
      // A scope that cannot be read costs that request the breaker's protection, not the request.
      return undefined;
    }
  };
  return (address) => {
    let keys = read.get(address);
    if (keys !== undefined || read.has(address)) return keys;
    const own = address.under(service);
    const partition = partitionKeyOf(own);
    const scope = own.scope;
    keys = partition === undefined ? undefined : { partition, account: scope && `${scope.service}|${scope.account}`, service: own.service ?? service ?? "table" };
    read.set(address, keys);
    return keys;
  };
}

/** The account scope key of a partition's key (`service|account|...`); undefined for a key of the user's own. */
export function accountKeyOf(partitionKey: string): string | undefined {
  const [service, account, resource] = partitionKey.split("|", 3);
  return resource !== undefined && (STORAGE_SERVICES as readonly string[]).includes(service as string) ? `${service}|${account}` : undefined;
}
