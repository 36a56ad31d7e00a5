import { detectServiceFromUrl } from "../partition/detectServiceFromUrl.js";
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

/**
 * The service a client talks to: from the endpoint's host (`*.table.core.windows.net`,
 * sovereign clouds, `*.table.cosmos.azure.com`), else from the client's class name (Azurite's
 * path-style endpoints carry no service in the URL). Undefined when neither tells.
 */
export function detectService(target: unknown): StorageService | undefined {
  const url = (target as { url?: unknown } | null)?.url;
  const fromUrl = typeof url === "string" ? detectServiceFromUrl(url) : undefined;
  if (fromUrl !== undefined) return fromUrl;
  const className = (target as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof className === "string" ? CLASS_NAMES[className] : undefined;
}
