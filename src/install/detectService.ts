import type { StorageService } from "./storageService.js";

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

// <account>.<service>.core.windows.net and the sovereign clouds' equivalents; Cosmos DB's Table API.
const HOST_PATTERN = /^[^.]+\.(table|blob|queue)(?:\.storage)?\.(?:core\.|cosmos\.)/i;

/**
 * The service a client talks to: from the endpoint's host (`*.table.core.windows.net`,
 * sovereign clouds, `*.table.cosmos.azure.com`), else from the client's class name (Azurite's
 * path-style endpoints carry no service in the URL). Undefined when neither tells.
 */
export function detectService(target: unknown): StorageService | undefined {
  const url = (target as { url?: unknown } | null)?.url;
  if (typeof url === "string") {
    const host = safeHost(url);
    const match = host ? HOST_PATTERN.exec(host) : null;
    if (match?.[1]) return match[1].toLowerCase() as StorageService;
  }
  const className = (target as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof className === "string" ? CLASS_NAMES[className] : undefined;
}

function safeHost(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}
