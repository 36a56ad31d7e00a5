// The retry policy is given the read-back policy (`ambiguousWrites.readBackPolicy`) and finds its
// routes here: no public type between the two. A route is kept on the request itself, under a mark
// of one policy's routes (address/requestMarks.ts): it goes with the request, nothing to clean up.
import type { PipelinePolicy, PipelineRequest, SendRequest } from "@azure/core-rest-pipeline";
import { createRequestMark } from "../address/requestMarks.js";

/**
 * Where each write's read-back is sent: the routes of one `ambiguousWriteReadBackPolicy()`,
 * which remembers a route for every write; the retry policy given that policy
 * (`ambiguousWrites: { readBackPolicy }`) sends its read-back GET along it.
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

/** A new, empty {@link ReadBackRoutes}, for one read-back policy. */
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

/** Each read-back policy's routes, found once when a retry policy is made (not per request). */
const routesOfPolicy = new WeakMap<PipelinePolicy, ReadBackRoutes>();

/** Makes `policy` (a read-back policy) the one whose routes are `routes`. */
export function setReadBackRoutes(policy: PipelinePolicy, routes: ReadBackRoutes): void {
  routesOfPolicy.set(policy, routes);
}

/** The routes of a policy `ambiguousWriteReadBackPolicy()` made; undefined for anything else. */
export function readBackRoutesOf(policy: unknown): ReadBackRoutes | undefined {
  return typeof policy === "object" && policy !== null ? routesOfPolicy.get(policy as PipelinePolicy) : undefined;
}
