// Where a write's read-back is sent. One object is given to both policies, so the link between
// them is written where each is made. The route is kept on the request itself, under a mark that
// belongs to this one object (address/requestMarks.ts): it goes with the request, nothing to clean up.
import type { PipelineRequest, SendRequest } from "@azure/core-rest-pipeline";
import { createRequestMark } from "../address/requestMarks.js";

/**
 * Where each write's read-back is sent: `ambiguousWriteReadBackPolicy(routes)` remembers a
 * route for every write, and `resilientRetryPolicy({ ambiguousWrites: { readBackRoutes: routes } })`
 * sends its read-back GET along it. Make one with {@link createReadBackRoutes} per pipeline
 * and give the same object to both; `installResilience` does this for you.
 */
export interface ReadBackRoutes {
  /** Remembers, for a write, the rest of the pipeline and its URL as they are now. */
  remember(request: PipelineRequest, next: SendRequest): void;
  /**
   * The route remembered for this request, or undefined when none was: `next`, the rest of
   * the client's pipeline as the write's first policy saw it (signing, the retry policy, the
   * client's HttpClient), and `url`, the write's URL before a SAS was appended to it.
   */
  routeOf(request: PipelineRequest): { readonly next: SendRequest; readonly url: string } | undefined;
}

/** One write's route, as {@link ReadBackRoutes.routeOf} answers it. */
export type ReadBackRoute = NonNullable<ReturnType<ReadBackRoutes["routeOf"]>>;

/**
 * A new, empty {@link ReadBackRoutes}, for one pipeline's read-back policy and retry policy.
 *
 * @example
 * const routes = createReadBackRoutes();
 * pipeline.addPolicy(ambiguousWriteReadBackPolicy(routes), { phase: "Serialize" });
 * pipeline.addPolicy(resilientRetryPolicy({ ambiguousWrites: { readBackRoutes: routes } }), { phase: "Retry" });
 */
export function createReadBackRoutes(): ReadBackRoutes {
  const routes = createRequestMark<ReadBackRoute>("azure-storage-resilience.readBackRoute");
  return {
    remember(request, next) {
      routes.set(request, { next, url: request.url });
    },
    routeOf(request) {
      return routes.get(request);
    },
  };
}

/** True for an object with `remember` and `routeOf` methods, as {@link createReadBackRoutes} makes. */
export function isReadBackRoutes(value: unknown): value is ReadBackRoutes {
  const routes = value as Partial<ReadBackRoutes> | null | undefined;
  return typeof routes?.remember === "function" && typeof routes.routeOf === "function";
}
