import type { Pipeline } from "@azure/core-rest-pipeline";
import { hasMethods } from "../validation/optionSchema.js";

/** True for an `@azure/core-rest-pipeline` Pipeline (duck-typed: two copies of the package may be loaded). */
const isPipeline = hasMethods("addPolicy", "removePolicy", "getOrderedPolicies") as (value: unknown) => value is Pipeline;

/**
 * The core pipeline behind `target`: the target itself, its public `pipeline`
 * (`TableClient`, `TableServiceClient`), or for Blob and Queue clients the pipeline behind
 * their `storageClientContext` (see storageClientContextPipeline for why). Throws a TypeError
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

/**
 * Where the core pipeline of an `@azure/storage-blob` or `@azure/storage-queue` client sits, or
 * undefined when `target` is not such a client; `findPipeline` checks what it returns.
 *
 * Why a private path: these clients' public `pipeline` option is a storage `Pipeline` of legacy
 * `RequestPolicyFactory`s, and their pipeline builder (`getCoreClientOptions`) always adds its own
 * `storageRetryPolicy` to the core pipeline's Retry phase; no public option removes it
 * (`retryOptions.maxTries: 1` only stops it retrying). The places, each tested against the oldest
 * and newest release of the peer range in CI's peer matrix:
 * - `storageClientContext.pipeline`: Blob from 12.23 to today, Queue up to 12.31;
 * - `storageClientContext.queuesClient.pipeline`: Queue from 12.32 (a TypeSpec client).
 * `storageClientContext` is TypeScript-`protected` but a plain instance property that the SDK
 * itself reads across classes. A new place makes this return undefined, and `findPipeline` then
 * throws rather than installing nothing. Clients derived from one another (`getContainerClient`,
 * `getQueueClient`) share this core pipeline: installing on one covers all of them.
 */
export function storageClientContextPipeline(target: unknown): unknown {
  const context = property(target, "storageClientContext");
  if (context === undefined) return undefined;
  return property(context, "pipeline") ?? property(property(context, "queuesClient"), "pipeline");
}

function property(value: unknown, name: string): unknown {
  if (typeof value !== "object" || value === null) return undefined;
  return (value as Record<string, unknown>)[name];
}

/**
 * True for a storage `Pipeline` (from `newPipeline()` in `@azure/storage-blob` or
 * `@azure/storage-queue`): a list of legacy request policy factories, not a core pipeline.
 */
function isStoragePipeline(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { factories?: unknown; toServiceClientOptions?: unknown };
  return Array.isArray(candidate.factories) && typeof candidate.toServiceClientOptions === "function";
}
