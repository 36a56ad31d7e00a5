import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { CallerPolicy } from "./callerPolicy.js";
import { createObserverHooks } from "../observers/observerHooks.js";
import { resolveRetryPolicyOptions, type ResilientRetryPolicyOptions } from "./retryPolicyOptions.js";
import { Operation } from "./operation.js";

/** The policy's name; unique in a pipeline, so users can find and remove it. */
export const resilientRetryPolicyName = "resilientRetryPolicy";

/**
 * A Retry-phase policy that classifies every attempt, retries the retriable ones with the
 * chosen backoff (honouring server hints, the deadline and the caller's abort signal) and,
 * when it gives up, returns or throws exactly what the last attempt produced.
 */
export function resilientRetryPolicy(options: ResilientRetryPolicyOptions = {}): PipelinePolicy {
  return createRetryPolicyWithCaller(options).policy;
}

/** {@link resilientRetryPolicy} and its caller policy, which `installResilience`'s handle tracks work with. */
export function createRetryPolicyWithCaller(options: ResilientRetryPolicyOptions): { policy: PipelinePolicy; caller: CallerPolicy } {
  const settings = resolveRetryPolicyOptions(options);
  const hooks = createObserverHooks(settings.observers);
  // One per policy (installResilience makes one policy per install): the caller declared is this client's.
  const caller = new CallerPolicy(settings.caller);
  return {
    policy: {
      name: resilientRetryPolicyName,
      sendRequest: (request, next) => new Operation(request, settings, hooks, caller).run(next),
    },
    caller,
  };
}
