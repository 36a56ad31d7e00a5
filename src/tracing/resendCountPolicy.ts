// The resend count on each HTTP attempt span. The Azure SDK's tracingPolicy (core-rest-pipeline
// 1.10-1.25) starts a span per attempt but does not set `http.request.resend_count`, which the
// OpenTelemetry HTTP conventions and the Azure SDK's tracing conventions ask of a resent request.
// This policy sits after tracingPolicy, inside the context it makes active for the attempt.
import type { PipelinePolicy, PipelineRequest } from "@azure/core-rest-pipeline";
import type { Context } from "@opentelemetry/api";
import { retryInfoMarkOf } from "../address/requestMarks.js";
import type { RetryInfo } from "../policies/retryInfo.js";
import { openTelemetryTraceApi } from "./operationSpan.js";
import { TRACE_ATTRIBUTES } from "./traceNames.js";

/** The policy's name; unique in a pipeline. */
export const resendCountPolicyName = "resendCountPolicy";

/** The SDK policy that starts each attempt's span: this one goes right after it. */
export const SDK_TRACING_POLICY_NAME = "tracingPolicy";

/**
 * Sets `http.request.resend_count` on the span of each attempt the retry policy sends again (1
 * for the first resend; a first send has none). Add it after the SDK's `tracingPolicy`
 * (`installResilience` does): it reads the attempt's span from the active OpenTelemetry context,
 * which needs a context manager (NodeSDK, NodeTracerProvider.register() and the Azure Monitor
 * distro register one). The first attempt costs one property read.
 *
 * @example
 * pipeline.addPolicy(resendCountPolicy(), { afterPhase: "Retry", afterPolicies: ["tracingPolicy"] });
 */
export function resendCountPolicy(): PipelinePolicy {
  return {
    name: resendCountPolicyName,
    sendRequest(request, next) {
      // This send is not recorded yet: the sends before it are its resend count.
      const resends = sendsOf(request);
      if (resends > 0) setResendCount(request, resends);
      return next(request);
    },
  };
}

/** HTTP attempts the retry policy has sent for `request`'s operation (its record counts refusals by an open circuit as attempts too). */
export function sendsOf(request: PipelineRequest): number {
  const info = retryInfoMarkOf<RetryInfo>(request);
  // Before the first attempt, nothing to count: one property read.
  if (info === undefined || info.attempts === 0) return 0;
  let sends = 0;
  for (const cls of info.classes) if (cls !== "circuit_open") sends += 1;
  return sends;
}

function setResendCount(request: PipelineRequest, resends: number): void {
  const otel = openTelemetryTraceApi();
  if (otel === undefined) return;
  const span = otel.trace.getSpan(otel.context.active());
  if (span === undefined || !span.isRecording()) return;
  // No attempt span (tracingPolicy made none, or is not before us): the active one is the call's own, not an attempt's.
  const operationContext = request.tracingOptions?.tracingContext;
  if (operationContext !== undefined && otel.trace.getSpan(operationContext as unknown as Context) === span) return;
  span.setAttribute(TRACE_ATTRIBUTES.resendCount, resends);
}
