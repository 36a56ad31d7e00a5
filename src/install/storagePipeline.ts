/**
 * Where the core pipeline of an `@azure/storage-blob` or `@azure/storage-queue` client
 * (`BlobServiceClient`, `ContainerClient`, `BlobClient` and its subclasses,
 * `QueueServiceClient`, `QueueClient`) sits: the value of `storageClientContext.pipeline`,
 * or undefined when `target` has no `storageClientContext`. `findPipeline` checks it.
 *
 * Why this path: the storage clients' public `pipeline` option is a storage `Pipeline` of
 * legacy `RequestPolicyFactory`s, and their pipeline builder (`getCoreClientOptions`)
 * drops any `StorageRetryPolicyFactory` found there and always adds its own
 * `storageRetryPolicy` to the Retry phase of a core pipeline; no public option removes it
 * (`retryOptions.maxTries: 1` only stops it retrying), and legacy factories cannot be
 * placed in the Retry phase. The core pipeline every request goes through is the
 * `pipeline` property (public on `@azure/core-client`'s `ServiceClient`) of the client's
 * `storageClientContext`, which is TypeScript-`protected` but a plain instance property
 * that the SDK itself reads across classes (`containerClient["storageClientContext"]` in
 * `BlobServiceClient`, `BlobLeaseClient`). It holds the same policies from 12.23 (the
 * oldest release in our ^12.20 peer range) to the versions test/unit/install/storagePipeline.test.ts
 * runs against.
 * What would break it: a rename of `storageClientContext`, or the SDK building a new
 * core pipeline per request. A rename makes this return undefined and `findPipeline`
 * then throws (it sees a storage `Pipeline`) rather than installing nothing.
 *
 * Clients derived from one another (`getContainerClient`, `getBlockBlobClient`,
 * `getQueueClient`) share the storage `Pipeline` and so this core pipeline: installing
 * on one covers all of them, before and after they were created.
 */
export function storageClientContextPipeline(target: unknown): unknown {
  if (typeof target !== "object" || target === null) return undefined;
  const context = (target as { storageClientContext?: unknown }).storageClientContext;
  if (typeof context !== "object" || context === null) return undefined;
  return (context as { pipeline?: unknown }).pipeline;
}

/**
 * True for a storage `Pipeline` (from `newPipeline()` in `@azure/storage-blob` or
 * `@azure/storage-queue`): a list of legacy request policy factories, not a core pipeline.
 */
export function isStoragePipeline(value: unknown): boolean {
  if (typeof value !== "object" || value === null) return false;
  const candidate = value as { factories?: unknown; toServiceClientOptions?: unknown };
  return Array.isArray(candidate.factories) && typeof candidate.toServiceClientOptions === "function";
}
