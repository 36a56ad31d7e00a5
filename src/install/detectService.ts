import { detectServiceFromUrl } from "../address/storageHost.js";
import type { StorageService } from "../address/partitionScope.js";

const CLASS_NAMES: Readonly<Record<string, StorageService>> = {
  TableClient: "table",
  TableServiceClient: "table",
  BlobServiceClient: "blob",
  ContainerClient: "blob",
  BlobClient: "blob",
  BlockBlobClient: "blob",
  AppendBlobClient: "blob",
  PageBlobClient: "blob",
  BlobBatchClient: "blob",
  QueueServiceClient: "queue",
  QueueClient: "queue",
};

/**
 * The service a client talks to: from the endpoint's host (`*.table.core.windows.net`,
 * sovereign clouds, `*.table.cosmos.azure.com`), else from the client's class name (Azurite's
 * path-style endpoints carry no service in the URL). Undefined when neither tells.
 */
export function detectService(target: unknown): StorageService | undefined {
  const url = (target as { url?: unknown } | null)?.url;
  const fromUrl = typeof url === "string" ? detectServiceFromUrl(url) : undefined;
  if (fromUrl !== undefined) return fromUrl;
  return serviceFromClassName(target);
}

/** The service of the nearest SDK class in `target`'s prototype chain, so a user's subclass is recognised too. */
function serviceFromClassName(target: unknown): StorageService | undefined {
  if (typeof target !== "object" || target === null) return undefined;
  for (let proto: unknown = Object.getPrototypeOf(target); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const className = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    const service = typeof className === "string" && Object.hasOwn(CLASS_NAMES, className) ? CLASS_NAMES[className] : undefined;
    if (service !== undefined) return service;
  }
  return undefined;
}
