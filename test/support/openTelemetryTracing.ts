import { createRequire } from "node:module";
import { context, trace, type Attributes } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { createAzureSdkInstrumentation } from "@azure/opentelemetry-instrumentation-azure-sdk";

/** OpenTelemetry tracing as an application sets it up, ending in an in-memory exporter. */
export interface InMemoryTracing {
  readonly exporter: InMemorySpanExporter;
  /** Spans ended so far. */
  spans(): ReadableSpan[];
  shutdown(): Promise<void>;
}

/**
 * A tracer provider with the in-memory exporter, registered globally with an AsyncLocalStorage
 * context manager (as NodeSDK or NodeTracerProvider.register() do), and the Azure SDK's
 * instrumentation. The instrumentation hooks `require` of @azure/core-tracing; vitest loads the
 * SDKs as ES modules, which that hook does not see, so @azure/core-tracing is required once here
 * (its CommonJS and ES builds share the instrumenter it sets).
 */
export function inMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  const instrumentation = createAzureSdkInstrumentation();
  instrumentation.enable();
  createRequire(import.meta.url)("@azure/core-tracing");
  return {
    exporter,
    spans: () => exporter.getFinishedSpans(),
    async shutdown() {
      instrumentation.disable();
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** A span's events with their offset from the span's start, in ms. */
export function eventsOf(span: ReadableSpan): { name: string; atInMs: number; attributes: Attributes }[] {
  const start = hrToMs(span.startTime);
  return span.events.map((e) => ({ name: e.name, atInMs: hrToMs(e.time) - start, attributes: e.attributes ?? {} }));
}

export function hrToMs(time: readonly [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

/** Spans whose parent is `parent`. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
}
