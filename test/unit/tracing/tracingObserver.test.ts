import { afterEach, describe, expect, it, vi } from "vitest";
import { context, ROOT_CONTEXT, trace, type Span } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { createTracingClient } from "@azure/core-tracing";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createTracingObserver, fixedBackoff, resendCountPolicy, resilientRetryPolicy, type RetryBudget } from "../../../src/index.js";
import { attachRetryInfo } from "../../../src/address/requestMarks.js";
import { WakeList } from "../../../src/timing/wake.js";
import type { PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { asGateOption, gateOf, waitOf } from "../../support/scriptedGate.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";

/** A request as an SDK client method makes it: its call's tracing context in `tracingOptions`. */
function request(tracingContext: unknown): PipelineRequest {
  const req = createPipelineRequest({ url, method: "PUT", body: "{}" });
  // Set afterwards, as core-client does: createPipelineRequest does not copy it on every release.
  req.tracingOptions = { tracingContext: tracingContext as never };
  return req;
}

function answers(...statuses: number[]) {
  return vi.fn<SendRequest>(async (req) => {
    const status = statuses.shift();
    if (status === undefined) throw new Error("unexpected extra attempt");
    return { request: req, status, headers: createHttpHeaders(status === 503 ? { "x-ms-error-code": "ServerBusy" } : {}) } satisfies PipelineResponse;
  });
}

/** A recording span that keeps what is written on it. */
function recordingSpan() {
  const span = {
    events: [] as { name: string; attributes: Record<string, unknown>; time: unknown }[],
    attributes: {} as Record<string, unknown>,
    isRecording: () => true,
    addEvent(name: string, attributes: Record<string, unknown>, time?: unknown) {
      span.events.push({ name, attributes, time });
      return span;
    },
    setAttribute(key: string, value: unknown) {
      span.attributes[key] = value;
      return span;
    },
  };
  return span;
}

afterEach(() => {
  context.disable();
});

describe("tracing observer: nothing paid on the success path", () => {
  it("calls no span API and reads no tracing context when the first attempt succeeds", async () => {
    const getSpan = vi.spyOn(trace, "getSpan");
    const active = vi.spyOn(context, "active");
    const policy = resilientRetryPolicy({ observers: [createTracingObserver()], retry: fixedBackoff({ delayInMs: 1 }) });
    // What an SDK client method hands down with no OpenTelemetry instrumentation: core-tracing's own context, its reads watched.
    const sdk = createTracingClient({ namespace: "Microsoft.Data.Tables", packageName: "@azure/data-tables" });
    const tracingContext = sdk.startSpan("TableClient.upsertEntity", {}).updatedOptions.tracingOptions!.tracingContext!;
    const getValue = vi.spyOn(tracingContext, "getValue");
    for (let i = 0; i < 3; i++) await policy.sendRequest(request(tracingContext), answers(200));
    // Through the resend-count policy too, as installResilience places it.
    const resend = resendCountPolicy();
    const req = request(tracingContext);
    await policy.sendRequest(req, (r) => resend.sendRequest(r, answers(204)));
    expect(getSpan).not.toHaveBeenCalled();
    expect(active).not.toHaveBeenCalled();
    expect(getValue).not.toHaveBeenCalled();

    // The spies see calls: a retried operation looks its span up.
    await policy.sendRequest(request(tracingContext), answers(503, 200));
    expect(getSpan).toHaveBeenCalledTimes(1);
    expect(getValue).toHaveBeenCalled();
  });
});

describe("tracing observer: what it writes on the call's span", () => {
  it("an event per attempt and per wait, then the totals on the span", async () => {
    const span = recordingSpan();
    const policy = resilientRetryPolicy({ observers: [createTracingObserver()], retry: fixedBackoff({ delayInMs: 5, maxRetries: 3 }) });
    await policy.sendRequest(request(trace.setSpan(ROOT_CONTEXT, span as unknown as Span)), answers(503, 500, 200));
    expect(span.events.map((e) => `${e.name} ${String(e.attributes["azure.storage.attempt.class"] ?? e.attributes["azure.storage.wait.reason"])}`)).toEqual([
      "azure.storage.attempt throttled",
      "azure.storage.wait backoff",
      "azure.storage.attempt transient",
      "azure.storage.wait backoff",
      "azure.storage.attempt success",
    ]);
    expect(span.events[0]?.attributes).toMatchObject({
      "http.response.status_code": 503,
      "azure.storage.error.code": "ServerBusy",
      "http.request.resend_count": 0,
    });
    expect(span.events[4]?.attributes["http.request.resend_count"]).toBe(2);
    const wait = span.events[1]!;
    expect(wait.attributes).toMatchObject({ "azure.storage.wait.planned_ms": 5, "azure.storage.wait.ended": "waited", "azure.storage.wait.source": "backoff" });
    expect(wait.attributes["azure.storage.wait.actual_ms"]).toBeGreaterThanOrEqual(4);
    // Timestamped when the wait began: before the attempt that followed it.
    expect(typeof wait.time).toBe("number");
    expect(span.attributes).toMatchObject({ "azure.storage.attempts": 3, "azure.storage.stop_reason": "success" });
    expect(span.attributes["azure.storage.waited_ms"]).toBeGreaterThanOrEqual(8);
  });

  it("a paced wait: the partition's state and send rate when it began, and a wake that ends it early", async () => {
    const span = recordingSpan();
    const queue = new WakeList();
    const gate = gateOf(waitOf("pacing", 200, queue));
    const breaker = { statusOf: () => ({ state: "paced", available: false, retryAfterInMs: 200, ratePerSecond: 12.345 }) } as unknown as PartitionBreaker;
    const policy = resilientRetryPolicy({ observers: [createTracingObserver({ circuitBreaker: breaker })], gate: asGateOption(gate) });
    setTimeout(() => queue.wakeAll(), 20);
    await policy.sendRequest(request(trace.setSpan(ROOT_CONTEXT, span as unknown as Span)), answers(200));
    const wait = span.events.find((e) => e.name === "azure.storage.wait");
    expect(wait?.attributes).toMatchObject({
      "azure.storage.wait.reason": "pacing",
      "azure.storage.wait.planned_ms": 200,
      "azure.storage.wait.ended": "woken",
      "azure.storage.partition.state": "paced",
      "azure.storage.partition.rate_per_s": 12.3,
    });
    expect(wait?.attributes["azure.storage.wait.actual_ms"]).toBeLessThan(200);
    // The first attempt after it is written too: the call did not go straight through.
    expect(span.events.map((e) => e.name)).toEqual(["azure.storage.wait", "azure.storage.attempt"]);
    expect(span.attributes).toMatchObject({ "azure.storage.attempts": 1, "azure.storage.stop_reason": "success" });
  });

  it("a local refusal: the stop reason, what it could not wait for, and when to come back", async () => {
    const span = recordingSpan();
    const emptyBudget: RetryBudget = {
      recordRequest: () => undefined,
      tryRetry: () => false,
      retryAfterInMs: () => 750,
      snapshot: () => ({ requests: 1, retries: 0, available: 0 }),
    };
    const policy = resilientRetryPolicy({
      observers: [createTracingObserver()],
      retry: fixedBackoff({ delayInMs: 5 }),
      retryBudget: emptyBudget,
      caller: { failFast: true },
    });
    await policy.sendRequest(request(trace.setSpan(ROOT_CONTEXT, span as unknown as Span)), answers(503));
    const refused = span.events.find((e) => e.name === "azure.storage.refused");
    expect(refused?.attributes).toEqual({
      "azure.storage.stop_reason": "budget-exhausted",
      "azure.storage.wait.reason": "budget",
      "azure.storage.retry_after_ms": 750,
    });
    expect(span.attributes).toMatchObject({ "azure.storage.attempts": 1, "azure.storage.stop_reason": "budget-exhausted" });
  });

  it("writes nothing on a span that does not record, and adds no partition unless asked", async () => {
    const quiet = { ...recordingSpan(), isRecording: () => false };
    const policy = resilientRetryPolicy({ observers: [createTracingObserver()], retry: fixedBackoff({ delayInMs: 1 }) });
    await policy.sendRequest(request(trace.setSpan(ROOT_CONTEXT, quiet as unknown as Span)), answers(503, 200));
    expect(quiet.events).toEqual([]);
    const span = recordingSpan();
    const withPartition = resilientRetryPolicy({ observers: [createTracingObserver({ partitionAttribute: true })], retry: fixedBackoff({ delayInMs: 1 }) });
    await withPartition.sendRequest(request(trace.setSpan(ROOT_CONTEXT, span as unknown as Span)), answers(503, 200));
    expect(span.attributes["azure.storage.partition"]).toBe("table|acct|orders|p1");
  });

  it("rejects bad options by name", () => {
    expect(() => createTracingObserver({ partitionAttribute: "yes" as never })).toThrow(/partitionAttribute must be a boolean; got/);
    expect(() => createTracingObserver(null as never)).toThrow(TypeError);
    expect(() => createTracingObserver({ circuitBreaker: {} as never })).toThrow(/circuitBreaker must be a breaker/);
    expect(() => createTracingObserver({ sampled: true } as never)).toThrow(/sampled is not a known option of createTracingObserver/);
  });
});

describe("resendCountPolicy", () => {
  it("sets http.request.resend_count on the active attempt span of a resend only", async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    const operation = recordingSpan();
    const attempt = recordingSpan();
    const policy = resendCountPolicy();
    const req = request(trace.setSpan(ROOT_CONTEXT, operation as unknown as Span));
    const send = () => context.with(trace.setSpan(ROOT_CONTEXT, attempt as unknown as Span), () => policy.sendRequest(req, answers(200)));
    const info = { attempts: 0, classes: [] as string[], possiblyApplied: false, unknownOutcomes: 0 };
    attachRetryInfo(req, info);
    await send();
    expect(attempt.attributes).toEqual({});
    // After a throttled attempt and a refusal by an open circuit (not a send): the first resend.
    Object.assign(info, { attempts: 2, classes: ["throttled", "circuit_open"] });
    await send();
    expect(attempt.attributes).toEqual({ "http.request.resend_count": 1 });
    // No attempt span active (the SDK's tracingPolicy made none): the call's own span is left alone.
    await context.with(trace.setSpan(ROOT_CONTEXT, operation as unknown as Span), () => policy.sendRequest(req, answers(200)));
    expect(operation.attributes).toEqual({});
  });
});
