import type { Pipeline } from "@azure/core-rest-pipeline";

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
 * The core pipeline behind `target`: the target itself, or its public `pipeline`
 * (`TableClient`, `TableServiceClient`). Throws a TypeError saying what was found instead.
 */
export function findPipeline(target: unknown): Pipeline {
  if (isPipeline(target)) return target;
  const pipeline = (target as { pipeline?: unknown } | null)?.pipeline;
  if (isPipeline(pipeline)) return pipeline;
  if (pipeline !== undefined) {
    throw new TypeError(
      "target.pipeline is not an @azure/core-rest-pipeline Pipeline (it has no addPolicy/removePolicy); " +
        "pass a TableClient, a TableServiceClient or a Pipeline.",
    );
  }
  throw new TypeError("target must be an Azure SDK client with a `pipeline` (e.g. TableClient) or a Pipeline.");
}
