import type { Pipeline } from "@azure/core-rest-pipeline";
import { isStoragePipeline, storageClientContextPipeline } from "./storagePipeline.js";

/** True for an `@azure/core-rest-pipeline` Pipeline (duck-typed: two copies of the package may be loaded). */
export function isPipeline(value: unknown): value is Pipeline {
  const candidate = value as Partial<Pipeline> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.addPolicy === "function" &&
    typeof candidate.removePolicy === "function" &&
    typeof candidate.getOrderedPolicies === "function"
  );
}

/**
 * The core pipeline behind `target`: the target itself, its public `pipeline`
 * (`TableClient`, `TableServiceClient`), or for Blob and Queue clients the pipeline behind
 * their `storageClientContext` (see storagePipeline.ts for why). Throws a TypeError
 * saying what was found instead.
 */
export function findPipeline(target: unknown): Pipeline {
  if (isPipeline(target)) return target;
  if (isStoragePipeline(target)) {
    throw new TypeError(
      "target is a storage Pipeline (from newPipeline()), which holds no core pipeline until a client is built from it; " +
        "pass the BlobServiceClient, ContainerClient, BlobClient, QueueServiceClient or QueueClient instead.",
    );
  }
  const storagePipeline = storageClientContextPipeline(target);
  if (isPipeline(storagePipeline)) return storagePipeline;
  const pipeline = (target as { pipeline?: unknown } | null)?.pipeline;
  if (isPipeline(pipeline)) return pipeline;
  if (isStoragePipeline(pipeline)) {
    throw new TypeError(
      "target looks like a Blob or Queue client, but its core pipeline was not found at storageClientContext.pipeline " +
        "or storageClientContext.queuesClient.pipeline; " +
        "this @azure/storage-blob or @azure/storage-queue version is not supported.",
    );
  }
  if (pipeline !== undefined) {
    throw new TypeError(
      "target.pipeline is not an @azure/core-rest-pipeline Pipeline (it has no addPolicy/removePolicy); " +
        "pass a TableClient, a TableServiceClient, a Blob or Queue client, or a Pipeline.",
    );
  }
  throw new TypeError("target must be an Azure Storage client (TableClient, BlobServiceClient, QueueClient ...) or a Pipeline.");
}
