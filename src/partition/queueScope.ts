import type { PartitionScope } from "./partitionScope.js";

/** The scope of a Queue request: a queue is one partition, so there is never a `partition`. */
export function queueScope(account: string, pathSegments: string[]): PartitionScope {
  return { service: "queue", account, resource: pathSegments[0] ?? "" };
}
