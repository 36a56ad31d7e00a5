import type { PartitionScope } from "./partitionScope.js";

/**
 * The scope of a Blob request: `/{container}/{blob name}` is the blob's own partition
 * (the name may hold slashes); `/{container}` is container-wide; the root is account-wide.
 */
export function blobScope(account: string, pathSegments: string[]): PartitionScope {
  const [container = "", ...blobPath] = pathSegments;
  const scope: PartitionScope = { service: "blob", account, resource: container };
  if (container === "") return scope;
  const blobName = blobPath.join("/");
  return blobName === "" ? scope : { ...scope, partition: blobName };
}
