// Fed by the loop's events like the metrics and the log; it asks the breaker for a partition's
// state and changes nothing.
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { Attributes, Span } from "@opentelemetry/api";
import type { PartitionBreaker, PartitionStatus } from "../breaker/partitionBreakerInterface.js";
import { retryInfoMarkOf } from "../address/requestMarks.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import {
  LOCAL_REFUSALS,
  type AmbiguousWriteEvent,
  type AttemptClass,
  type AttemptEvent,
  type LocalWaitEvent,
  type OperationEvent,
  type RetryObserver,
} from "../observers/retryEvents.js";
import type { RetryInfo } from "../policies/retryInfo.js";
import { operationSpanOf } from "./operationSpan.js";
import { sendsOf } from "./resendCountPolicy.js";
import { TRACE_ATTRIBUTES as A, TRACE_EVENTS } from "./traceNames.js";
import { resolveTracingObserverOptions, type TracingOptions } from "./tracingOptions.js";

/** What the observer keeps of one traced operation while it runs. */
interface OperationTrace {
  readonly span: Span;
  /** The partition's status when the current wait began (asked of the breaker then). */
  waitStatus: PartitionStatus | undefined;
}

/** Totals over the operations of one span (a call may make several: a blob uploaded in blocks). */
interface SpanTotals {
  attempts: number;
  waitedInMs: number;
}

/**
 * Creates the observer that writes what the retry policy did on the span of the SDK call it
 * served (docs/tracing.md): an event per attempt sent, per wait (with the partition's state),
 * per local refusal and per ambiguous write settled; on the span, the attempts sent, the time
 * waited and the stop reason. It needs `@opentelemetry/api` and the Azure SDK's OpenTelemetry
 * instrumentation (`@azure/opentelemetry-instrumentation-azure-sdk`); without them, or with no
 * span recording, it writes nothing. An operation that ends at its first attempt with no wait
 * costs it no span lookup. `installResilience` adds it (`tracing`); call it yourself for a
 * hand-built pipeline.
 *
 * @example
 * pipeline.addPolicy(resilientRetryPolicy({ observers: [createTracingObserver()] }), { phase: "Retry" });
 */
export function createTracingObserver(options: TracingOptions = {}): RetryObserver {
  const resolved = resolveTracingObserverOptions(options, "");
  return new TracingObserver(resolved.partitionAttribute, resolved.circuitBreaker);
}

class TracingObserver implements RetryObserver {
  readonly #partitionAttribute: boolean;
  readonly #breaker: PartitionBreaker | undefined;
  /** Operations looked up: their trace, or null when there is no recording span to write on. */
  readonly #traces = new WeakMap<PipelineRequest, OperationTrace | null>();
  /** Traced operations in flight: while none, an operation on the success path is not even looked up. */
  #live = 0;
  readonly #totals = new WeakMap<Span, SpanTotals>();

  constructor(partitionAttribute: boolean, breaker: PartitionBreaker | undefined) {
    this.#partitionAttribute = partitionAttribute;
    this.#breaker = breaker;
  }

  onAttempt(event: AttemptEvent): void {
    // A refusal by an open circuit sent nothing: the wait or the refusal that follows tells it.
    if (event.attemptClass === "circuit_open") {
      this.#traceOf(event.request, event);
      return;
    }
    const trace = isFirstAndLast(event) ? this.#existing(event.request) : this.#traceOf(event.request, event);
    if (trace === undefined) return;
    const attributes: Attributes = {
      [A.class]: event.attemptClass,
      [A.resendCount]: Math.max(0, sendsOf(event.request) - 1),
      [A.attemptDurationInMs]: roundMs(event.durationInMs),
    };
    if (event.status !== undefined) attributes[A.status] = event.status;
    const errorCode = safeErrorCode(event.errorCode);
    if (errorCode !== undefined) attributes[A.errorCode] = errorCode;
    if (event.secondary === true) attributes[A.secondary] = true;
    trace.span.addEvent(TRACE_EVENTS.attempt, attributes);
  }

  onLocalWait(event: LocalWaitEvent): void {
    const trace = this.#traceOf(event.request, event);
    if (trace === undefined) return;
    if (event.state === "started") {
      const scope = event.address.scopeKey;
      trace.waitStatus = scope === undefined ? undefined : this.#breaker?.statusOf(scope);
      return;
    }
    const waitedInMs = event.waitedInMs ?? 0;
    const attributes: Attributes = {
      [A.waitReason]: event.reason,
      [A.waitPlannedInMs]: roundMs(event.plannedInMs),
      [A.waitActualInMs]: roundMs(waitedInMs),
      [A.waitEnded]: event.ended ?? "waited",
    };
    if (event.source !== undefined) attributes[A.waitSource] = event.source;
    const status = trace.waitStatus;
    if (status !== undefined) {
      attributes[A.partitionState] = status.state;
      if (status.ratePerSecond !== undefined) attributes[A.partitionRatePerSecond] = Math.round(status.ratePerSecond * 10) / 10;
    }
    trace.waitStatus = undefined;
    // Timestamped when it began (a performance.now() reading, which OpenTelemetry's TimeInput takes).
    trace.span.addEvent(TRACE_EVENTS.wait, attributes, performance.now() - waitedInMs);
    this.#totalsOf(trace.span).waitedInMs += waitedInMs;
  }

  onAmbiguousWrite(event: AmbiguousWriteEvent): void {
    const trace = this.#traceOf(event.request, event);
    trace?.span.addEvent(TRACE_EVENTS.ambiguousWrite, { [A.ambiguousWriteResult]: event.result, [A.unknownOutcomes]: event.unknownOutcomes });
  }

  onOperationEnd(event: OperationEvent): void {
    const request = event.request;
    const trace = event.attempts === 1 && endsAtOnce(event.finalClass) ? this.#existing(request) : this.#traceOf(request, event);
    if (trace === undefined) return;
    this.#traces.delete(request);
    this.#live -= 1;
    const span = trace.span;
    const info = retryInfoMarkOf<RetryInfo>(request);
    const refused = LOCAL_REFUSALS[event.stopReason];
    if (refused !== undefined) {
      const attributes: Attributes = { [A.stopReason]: event.stopReason, [A.waitReason]: refused };
      if (info?.retryAfterInMs !== undefined) attributes[A.retryAfterInMs] = roundMs(info.retryAfterInMs);
      span.addEvent(TRACE_EVENTS.refused, attributes);
    }
    const totals = this.#totalsOf(span);
    totals.attempts += sendsOf(request);
    span.setAttribute(A.attempts, totals.attempts);
    span.setAttribute(A.waitedInMs, roundMs(totals.waitedInMs));
    span.setAttribute(A.stopReason, event.stopReason);
  }

  /** The operation's trace if it was looked up already; no lookup of a span (the success path's case while none is traced). */
  #existing(request: PipelineRequest): OperationTrace | undefined {
    return this.#live === 0 ? undefined : (this.#traces.get(request) ?? undefined);
  }

  /** The operation's trace, looking its span up the first time (a step off the success path). */
  #traceOf(request: PipelineRequest, event: { address: AttemptEvent["address"] }): OperationTrace | undefined {
    const known = this.#traces.get(request);
    if (known !== undefined) return known ?? undefined;
    const span = operationSpanOf(request);
    if (span === undefined) {
      this.#traces.set(request, null);
      return undefined;
    }
    const trace: OperationTrace = { span, waitStatus: undefined };
    this.#traces.set(request, trace);
    this.#live += 1;
    if (this.#partitionAttribute && event.address.scopeKey !== undefined) span.setAttribute(A.partition, event.address.scopeKey);
    return trace;
  }

  #totalsOf(span: Span): SpanTotals {
    let totals = this.#totals.get(span);
    if (totals === undefined) this.#totals.set(span, (totals = { attempts: 0, waitedInMs: 0 }));
    return totals;
  }
}

/** The first attempt, and the operation ends on it (success, permanent, aborted): the success path, nothing to explain. */
function isFirstAndLast(event: AttemptEvent): boolean {
  return event.attempt === 1 && event.secondary !== true && endsAtOnce(event.attemptClass);
}

/** A class the loop never goes on from (read-backs aside, which are told to onAmbiguousWrite). */
function endsAtOnce(cls: AttemptClass): boolean {
  return cls === "success" || cls === "permanent" || cls === "aborted";
}

/** Milliseconds to a tenth: finer is noise in a trace. */
function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}
