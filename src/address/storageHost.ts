import type { StorageService } from "./partitionScope.js";

/**
 * Hosts that name the service in the second label:
 * `<account>[-secondary].<service>.core.<cloud suffix>` (public, China, US Gov, legacy
 * Germany), Azure DNS-zone endpoints `<account>.z<NN>.<service>.storage.azure.net`, and
 * Cosmos DB's Table API `<account>.table.cosmos.azure.com`.
 */
const STORAGE_HOST =
  /^([^.]+)\.(?:(?:z\d+\.)?(table|blob|queue)\.(?:core\.(?:windows\.net|chinacloudapi\.cn|usgovcloudapi\.net|cloudapi\.de)|storage\.azure\.net)|(table)\.cosmos\.azure\.(?:com|cn|us))$/;

/** Hosts an emulator listens on, where the account is the first path segment. */
const PATH_STYLE_HOSTNAMES = new Set(["localhost", "host.docker.internal"]);

/** Azurite's production-style URLs: `<account>.<service>.localhost`. */
const AZURITE_PRODUCT_STYLE_HOST = /^([^.]+)\.(table|blob|queue)\.localhost$/;

/**
 * The account (without a `-secondary` suffix) and service a known Azure Storage hostname
 * (lower-case, no port) names, or undefined.
 */
export function parseStorageHost(hostname: string): { account: string; service: StorageService } | undefined {
  const match = STORAGE_HOST.exec(hostname) ?? AZURITE_PRODUCT_STYLE_HOST.exec(hostname);
  if (match === null) return undefined;
  const account = stripSecondary(match[1] ?? "");
  const service = (match[2] ?? match[3]) as StorageService | undefined;
  if (account === "" || service === undefined) return undefined;
  return { account, service };
}

/**
 * The storage service a URL's hostname names (see {@link parseStorageHost}). Undefined for
 * path-style URLs (`http://127.0.0.1:10002/devstoreaccount1/...`), whatever the port, because a
 * port says nothing reliable about the service; and for anything unparsable.
 */
export function detectServiceFromUrl(url: string): StorageService | undefined {
  try {
    return parseStorageHost(new URL(url).hostname.toLowerCase())?.service;
  } catch {
    return undefined;
  }
}

/** RA-GRS secondary endpoints append `-secondary`; the partition is the primary's. */
export function stripSecondary(account: string): string {
  return account.endsWith("-secondary") ? account.slice(0, -"-secondary".length) : account;
}

/** Hosts where the account is the first path segment (an emulator): loopback names, IP literals, single-label names. */
export function isPathStyleHost(hostname: string): boolean {
  if (PATH_STYLE_HOSTNAMES.has(hostname)) return true;
  if (hostname.startsWith("[")) return true; // IPv6 literal
  if (/^\d{1,3}(?:\.\d{1,3}){3}$/.test(hostname)) return true;
  return !hostname.includes(".");
}
