import { createRequire } from "node:module";
import { afterAll, beforeAll, expect } from "vitest";
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
/** In-memory tracing for a test file: registered before its tests, shut down after them; call the getter inside a test. */
export function useInMemoryTracing(): () => InMemoryTracing {
  let tracing: InMemoryTracing | undefined;
  beforeAll(() => {
    tracing = inMemoryTracing();
  });
  afterAll(async () => {
    await tracing?.shutdown();
  });
  return () => {
    if (tracing === undefined) throw new Error("useInMemoryTracing: read only inside a test");
    return tracing;
  };
}

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

/** What one call's trace says, read back from its spans. */
export interface ExplainedCall {
  readonly method: ReadableSpan;
  readonly attempts: readonly ReadableSpan[];
  readonly events: ReturnType<typeof eventsOf>;
  readonly durationInMs: number;
  /** Attempts' durations plus waits' actual lengths, from the span's own events. */
  readonly accountedInMs: number;
}

/** The one span named `name` and what hangs off it. */
export function explainCall(spans: readonly ReadableSpan[], name: string): ExplainedCall {
  const named = spans.filter((s) => s.name === name);
  if (named.length !== 1) throw new Error(`expected one ${name} span, got ${named.length}: ${spans.map((s) => s.name).join(", ")}`);
  const method = named[0] as ReadableSpan;
  const attempts = childrenOf(spans, method).sort((a, b) => hrToMs(a.startTime) - hrToMs(b.startTime));
  const events = eventsOf(method);
  const sum = (event: string, key: string) => events.filter((e) => e.name === event).reduce((total, e) => total + Number(e.attributes[key] ?? 0), 0);
  const accountedInMs = sum("azure.storage.attempt", "azure.storage.attempt.duration_ms") + sum("azure.storage.wait", "azure.storage.wait.actual_ms");
  return { method, attempts, events, durationInMs: hrToMs(method.duration), accountedInMs };
}

/** The call as text: the span, its attempt spans and its events in time order, offsets from its start. */
export function formatTrace(call: ExplainedCall): string {
  const start = hrToMs(call.method.startTime);
  const at = (ms: number) => `+${(ms / 1000).toFixed(3)} s`.padEnd(10);
  const attrs = (a: Attributes) =>
    Object.entries(a)
      .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
      .join(" ");
  const lines = [`${call.method.name}  ${(call.durationInMs / 1000).toFixed(3)} s  ${attrs(pick(call.method.attributes, /^azure\.storage\./))}`];
  const rows: { atInMs: number; text: string }[] = [];
  for (const span of call.attempts) {
    const from = hrToMs(span.startTime) - start;
    const status = span.attributes["http.status_code"];
    const resend = span.attributes["http.request.resend_count"];
    rows.push({
      atInMs: from,
      text: `span  ${span.name}  ${hrToMs(span.duration).toFixed(1)} ms  http.status_code=${status}${resend === undefined ? "" : ` http.request.resend_count=${resend}`}`,
    });
  }
  for (const e of call.events) rows.push({ atInMs: e.atInMs, text: `event ${e.name}  ${attrs(shorten(e.attributes))}` });
  rows.sort((a, b) => a.atInMs - b.atInMs);
  for (const row of rows) lines.push(`  ${at(row.atInMs)}${row.text}`);
  return lines.join("\n");
}

function pick(a: Attributes, key: RegExp): Attributes {
  return Object.fromEntries(Object.entries(a).filter(([k]) => key.test(k)));
}

/** Event attributes without the common prefix, for a line a reader can take in. */
function shorten(a: Attributes): Attributes {
  return Object.fromEntries(Object.entries(a).map(([k, v]) => [k.replace(/^azure\.storage\./, ""), v]));
}

/**
 * The call as an SVG timeline: the method span's bar, a row per attempt span (coloured by its
 * status), and the waits under them, each labelled with its reason and planned/actual length.
 */
export function traceSvg(call: ExplainedCall): string {
  const width = 1000;
  const left = 150;
  const scale = (width - left - 20) / call.durationInMs;
  const start = hrToMs(call.method.startTime);
  const x = (ms: number) => left + ms * scale;
  const rows: string[] = [];
  let y = 30;
  const bar = (label: string, from: number, length: number, fill: string, text: string) => {
    rows.push(`<text x="8" y="${y + 13}" font-size="12">${escape(label)}</text>`);
    rows.push(`<rect x="${x(from).toFixed(1)}" y="${y}" width="${Math.max(2, length * scale).toFixed(1)}" height="18" fill="${fill}" rx="2"/>`);
    // After the bar's start, or before it when the label would run off the right edge.
    const fits = x(from) + 4 + text.length * 6.2 < width;
    const textX = fits ? x(from) + 4 : x(from) - 4;
    rows.push(`<text x="${textX.toFixed(1)}" y="${y + 13}" font-size="11"${fits ? "" : ' text-anchor="end"'}>${escape(text)}</text>`);
    y += 26;
  };
  bar(call.method.name.replace(/^.*\./, ""), 0, call.durationInMs, "#9ecae1", `${call.method.name}  ${(call.durationInMs / 1000).toFixed(2)} s`);
  for (const [index, span] of call.attempts.entries()) {
    const status = Number(span.attributes["http.status_code"]);
    bar(`attempt ${index + 1}`, hrToMs(span.startTime) - start, hrToMs(span.duration), status >= 400 ? "#fc9272" : "#a1d99b", `${span.name} ${status}`);
  }
  for (const e of call.events.filter((event) => event.name === "azure.storage.wait")) {
    const actual = Number(e.attributes["azure.storage.wait.actual_ms"]);
    const planned = Number(e.attributes["azure.storage.wait.planned_ms"]);
    const reason = String(e.attributes["azure.storage.wait.reason"]);
    const state = e.attributes["azure.storage.partition.state"];
    bar(`wait (${reason})`, e.atInMs, actual, reason === "circuit" ? "#bcbddc" : "#fdd0a2", `${reason}: planned ${planned} ms, waited ${actual} ms${state === undefined ? "" : `, partition ${state}`}`);
  }
  const height = y + 24;
  const ticks: string[] = [];
  for (let s = 0; s * 1000 <= call.durationInMs; s += 0.5) {
    ticks.push(`<line x1="${x(s * 1000).toFixed(1)}" y1="22" x2="${x(s * 1000).toFixed(1)}" y2="${height - 20}" stroke="#ddd"/>`);
    ticks.push(`<text x="${x(s * 1000).toFixed(1)}" y="${height - 6}" font-size="10" text-anchor="middle">${s.toFixed(1)} s</text>`);
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="8" y="16" font-size="13" font-weight="bold">One slow call, from its trace: attempt spans and the waits between them (span events)</text>`,
    ...ticks,
    ...rows,
    `</svg>`,
    "",
  ].join("\n");
}

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * What every explained call must show: its attempt spans as children, one attempt event per
 * attempt span (with the same resend count) and the last a success, a wait event per
 * `waitedFor` reason at least, and attempts plus waits adding up to the span within 5 %.
 */
export function expectExplained(call: ExplainedCall, waitedFor: readonly string[]): void {
  const attemptEvents = call.events.filter((e) => e.name === "azure.storage.attempt");
  const waits = call.events.filter((e) => e.name === "azure.storage.wait");
  expect(call.attempts.length).toBeGreaterThanOrEqual(2);
  expect(attemptEvents).toHaveLength(call.attempts.length);
  expect(attemptEvents.map((e) => e.attributes["http.request.resend_count"])).toEqual(call.attempts.map((_, i) => i));
  // The SDK's span of each resent attempt carries the resend count; the first carries none.
  expect(call.attempts.map((s) => s.attributes["http.request.resend_count"])).toEqual(call.attempts.map((_, i) => (i === 0 ? undefined : i)));
  expect(attemptEvents.at(-1)?.attributes["azure.storage.attempt.class"]).toBe("success");
  expect(attemptEvents.slice(0, -1).every((e) => e.attributes["azure.storage.attempt.class"] !== "success")).toBe(true);
  for (const reason of waitedFor) expect(waits.some((e) => e.attributes["azure.storage.wait.reason"] === reason)).toBe(true);
  for (const wait of waits) {
    expect(Number(wait.attributes["azure.storage.wait.planned_ms"])).toBeGreaterThan(0);
    expect(Number(wait.attributes["azure.storage.wait.actual_ms"])).toBeGreaterThanOrEqual(0);
  }
  // The trace explains the call's time: what its events account for is the span's duration, within 5 %, or
  // 50 ms: on a starved machine (load 10 and more) the process waited 22 ms to be scheduled between events
  // of a 277 ms call. 50 ms is half the shortest wait these tests plan (100 ms), so a wait left out still fails.
  expect(Math.abs(call.durationInMs - call.accountedInMs)).toBeLessThanOrEqual(Math.max(0.05 * call.durationInMs, 50));
  const waitedInMs = waits.reduce((total, e) => total + Number(e.attributes["azure.storage.wait.actual_ms"]), 0);
  expect(call.method.attributes["azure.storage.attempts"]).toBe(call.attempts.length);
  expect(Number(call.method.attributes["azure.storage.waited_ms"])).toBeCloseTo(waitedInMs, 0);
  expect(call.method.attributes["azure.storage.stop_reason"]).toBe("success");
}

/** Every string value the call's span and its events carry (to look for what must not be there). */
export function stringsOf(call: ExplainedCall): string[] {
  const values = [call.method.attributes, ...call.events.map((e) => e.attributes)].flatMap((a) => Object.values(a));
  return values.filter((v): v is string => typeof v === "string");
}
