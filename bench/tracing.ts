// OpenTelemetry tracing in the bench process, as an application turns it on: a tracer provider
// whose spans go to a batch processor (exported to nowhere), a context manager, and the Azure
// SDK's instrumentation. For the overhead benchmark's traced comparison.
import { createRequire } from "node:module";
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { BasicTracerProvider, BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { createAzureSdkInstrumentation } from "@azure/opentelemetry-instrumentation-azure-sdk";

/** Takes every batch and drops it: the spans are built, recorded and handed over, as with a real exporter. */
const nowhere: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: () => Promise.resolve(),
};

/** Turns tracing on for the whole process; `stop()` shuts the provider down and unregisters it. */
export function startTracing(): { stop(): Promise<void> } {
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(nowhere)] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(provider);
  const instrumentation = createAzureSdkInstrumentation();
  instrumentation.enable();
  // The instrumentation hooks require(); the SDKs here load as ES modules, which share the instrumenter it sets.
  const coreTracing = createRequire(import.meta.url)("@azure/core-tracing") as { useInstrumenter(instrumenter: unknown): void };
  return {
    async stop() {
      instrumentation.disable();
      // disable() does not take the instrumenter out; with none set, core-tracing makes its no-op default again on next use.
      coreTracing.useInstrumenter(undefined);
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}
