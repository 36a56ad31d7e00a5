// Where the operation's span is: the Azure SDK's client method starts it (@azure/core-tracing's
// withSpan) and hands its context down in `request.tracingOptions.tracingContext`; with the
// OpenTelemetry instrumentation registered that context is an OpenTelemetry Context, and
// @opentelemetry/api's `trace.getSpan` reads the span from it. No tracing layer of our own.
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { Context, ContextAPI, Span, TraceAPI } from "@opentelemetry/api";
import { isPeerInstalled, loadOptionalPeer } from "../metrics/optionalPeer.js";

/** What the tracing code uses of @opentelemetry/api. */
export interface OpenTelemetryTraceApi {
  readonly trace: TraceAPI;
  readonly context: ContextAPI;
}

/** Undefined until first asked; null when the peer is not installed (asked once per process). */
let api: OpenTelemetryTraceApi | null | undefined;

/** @opentelemetry/api when installed (loaded on first use, never at import); undefined otherwise. */
export function openTelemetryTraceApi(): OpenTelemetryTraceApi | undefined {
  if (api === undefined) api = isPeerInstalled("@opentelemetry/api") ? loadOptionalPeer<OpenTelemetryTraceApi>("@opentelemetry/api", "Tracing") : null;
  return api ?? undefined;
}

/**
 * The recording span of the SDK call `request` belongs to, or undefined: no tracing context (the
 * request was not made by an SDK client method), no @opentelemetry/api, no OpenTelemetry
 * instrumentation (the context is core-tracing's own, holding no OpenTelemetry span), or a span
 * that records nothing (no tracer provider, sampled out, already ended).
 */
export function operationSpanOf(request: PipelineRequest): Span | undefined {
  const context = request.tracingOptions?.tracingContext;
  if (context === undefined) return undefined;
  const otel = openTelemetryTraceApi();
  if (otel === undefined) return undefined;
  // core-tracing's TracingContext and OpenTelemetry's Context share getValue(symbol), all getSpan reads.
  const span = otel.trace.getSpan(context as unknown as Context);
  return span !== undefined && span.isRecording() ? span : undefined;
}
