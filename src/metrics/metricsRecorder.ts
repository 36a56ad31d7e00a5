// The one recorder behind both sinks: it turns the policy's events into measurements of the
// metrics in metricNames.ts; a sink (Prometheus or OpenTelemetry) only says where each goes.
import type { RequestAddress } from "../address/requestAddress.js";
import type { StorageOperation } from "../address/storageOperation.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { AMBIGUOUS_WRITE_RESULTS } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { CircuitStateSource, CircuitTransition } from "../breaker/partitionBreakerInterface.js";
import { OUTCOME_CLASSES, RETRIABLE_CLASSES, type OutcomeClass } from "../classification/outcomeClass.js";
import { LOCAL_REFUSALS, type AmbiguousWriteEvent, type AttemptClass, type AttemptEvent, type LocalWaitEvent, type OperationEvent, type RetryEvent, type StopReason } from "../observers/retryEvents.js";
import { LOCAL_WAIT_REASONS } from "../policies/callerPolicy.js";
import { THROTTLE_ERROR_CODES, type Labels, type MetricKey, type OperationOutcome } from "./metricNames.js";
import { operationOutcome, OUTCOMES_BOUND_UP_FRONT } from "./operationOutcome.js";
import type { MetricsObserver } from "./metricsObserver.js";
import { breakerGauges, CIRCUIT_STATES, type BreakerGauge, type GaugeReader, type PacedScopeSource } from "./pacingMetrics.js";
import { OTHER_PARTITION_LABEL, TopScopeLabels } from "./topScopeLabels.js";

/** One series: a counter's increment, a histogram's observation, an up-down counter's change. */
export interface Series {
  record(value: number): void;
}

/** Where a recorder's measurements go: one Prometheus registry (and prefix), or one OpenTelemetry meter. */
export interface MetricSink {
  /** The series of `metric` with these labels (every label of the metric, in its order). */
  series(metric: MetricKey, labels: Labels): Series;
  /** The readers summed into a breaker gauge whenever it is read. */
  readers(metric: BreakerGauge): Set<GaugeReader>;
  /** The bounded partition label of each service, shared by every recorder on this sink's target. */
  readonly partitionLabels: Map<StorageService, TopScopeLabels>;
}

/** A series for a metric the sink does not record. */
export const NO_SERIES: Series = { record: () => undefined };

/** Stop reasons that mean "gave up on a retriable failure": retries, deadline or retry budget spent. */
const EXHAUSTED_STOP_REASONS: ReadonlySet<StopReason> = new Set<StopReason>(["retries-exhausted", "deadline", "budget-exhausted"]);

const ERROR_CODE_LABELS = new Set(THROTTLE_ERROR_CODES);

/** The series an operation name records on its success path, bound once and then reached by property lookups. */
interface OperationSeries {
  readonly labels: { readonly service: StorageService; readonly operation: StorageOperation };
  readonly attempts: Partial<Record<AttemptClass, Series>>;
  readonly outcomes: Partial<Record<OperationOutcome, Series>>;
  readonly durations: Partial<Record<OperationOutcome, Series>>;
}

/** Records every metric of docs/metrics.md for one service on one sink. */
export class MetricsRecorder implements MetricsObserver {
  readonly service: StorageService;
  readonly #sink: MetricSink;
  readonly #partitionLabels: TopScopeLabels | undefined;
  readonly #byOperation = new Map<StorageOperation, OperationSeries>();
  /** Every other series, by metric and label values: looked up per event, so only off the success path. */
  readonly #bound = new Map<string, Series>();
  readonly #subscriptions = new Set<() => void>();

  /** `partitionLabel`: the bounds of the opt-in partition label; the first recorder's bounds win for its service on one sink. */
  constructor(service: StorageService, sink: MetricSink, partitionLabel: { topN: number; minThrottles: number } | undefined) {
    this.service = service;
    this.#sink = sink;
    if (partitionLabel !== undefined) {
      let labels = sink.partitionLabels.get(service);
      if (labels === undefined) sink.partitionLabels.set(service, (labels = new TopScopeLabels(partitionLabel.topN, partitionLabel.minThrottles)));
      this.#partitionLabels = labels;
    }
    // Bound (so exported at 0 by Prometheus) up front: rate() and alerts see the first exhaustion, the waits read 0.
    this.#series("retryBudgetExhausted", { service });
    for (const reason of LOCAL_WAIT_REASONS) this.#series("localWaits", { service, reason });
  }

  onAttempt(event: AttemptEvent): void {
    const address = event.address.under(this.service);
    const operation = this.#operation(address.operation);
    const cls = event.attemptClass;
    (operation.attempts[cls] ??= this.#series("attempts", { ...operation.labels, class: cls })).record(1);
    // Only attempts that waited: zeros from every unpaced attempt would bury the waits (and cost the success path).
    if (event.pacedDelayInMs > 0) this.#series("pacingDelay", operation.labels).record(event.pacedDelayInMs / 1000);
    if (event.inChangeset === true) this.#series("batchChangesetFailures", { service: this.service, class: cls }).record(1);
    if (cls === "throttled") this.#recordThrottle(operation, event, address);
    else if (cls === "circuit_open") this.#series("circuitRejections", operation.labels).record(1);
    if (event.secondary === true && OUTCOME_CLASSES.includes(cls as OutcomeClass)) {
      this.#series("secondaryReads", { ...operation.labels, outcome: cls }).record(1);
    }
  }

  onRetry(event: RetryEvent): void {
    const operation = this.#operation(event.address.under(this.service).operation);
    this.#series("retries", { ...operation.labels, reason: event.reason }).record(1);
    this.#series("retryDelay", { service: this.service, reason: event.reason }).record(event.delayInMs / 1000);
  }

  onOperationEnd(event: OperationEvent): void {
    const operation = this.#operation(event.address.under(this.service).operation);
    const outcome = operationOutcome(operation.labels.operation, event.stopReason, event.response?.status);
    (operation.outcomes[outcome] ??= this.#series("operations", { ...operation.labels, outcome })).record(1);
    (operation.durations[outcome] ??= this.#series("operationDuration", { ...operation.labels, outcome })).record(event.elapsedInMs / 1000);
    if (EXHAUSTED_STOP_REASONS.has(event.stopReason)) this.#series("retriesExhausted", { ...operation.labels, class: event.finalClass }).record(1);
    if (event.stopReason === "budget-exhausted") this.#series("retryBudgetExhausted", { service: this.service }).record(1);
    const refused = LOCAL_REFUSALS[event.stopReason];
    if (refused !== undefined) this.#series("localRefusals", { service: this.service, reason: refused }).record(1);
  }

  onLocalWait(event: LocalWaitEvent): void {
    this.#series("localWaits", { service: this.service, reason: event.reason }).record(event.state === "started" ? 1 : -1);
  }

  onAmbiguousWrite(event: AmbiguousWriteEvent): void {
    if (!AMBIGUOUS_WRITE_RESULTS.includes(event.result)) return;
    this.#series("ambiguousWritesResolved", { service: this.service, operation: event.operation, result: event.result }).record(1);
  }

  observeCircuits(source: CircuitStateSource & Partial<PacedScopeSource>): () => void {
    if (typeof source?.stateCounts !== "function" || typeof source.onTransition !== "function") {
      throw new TypeError("observeCircuits needs a CircuitStateSource (stateCounts() and onTransition()).");
    }
    const gauges = breakerGauges(this.service, source, this.#partitionLabels);
    for (const [metric, reader] of gauges) this.#sink.readers(metric).add(reader);
    const stopListening = source.onTransition((transition) => this.#recordTransition(transition));
    let active = true;
    const stop = (): void => {
      if (!active) return;
      active = false;
      for (const [metric, reader] of gauges) this.#sink.readers(metric).delete(reader);
      stopListening();
      this.#subscriptions.delete(stop);
    };
    this.#subscriptions.add(stop);
    return stop;
  }

  dispose(): void {
    for (const stop of [...this.#subscriptions]) stop();
  }

  #recordTransition(transition: CircuitTransition): void {
    if (!CIRCUIT_STATES.includes(transition.to)) return;
    // A transition that names no service we know counts under this recorder's.
    const service = STORAGE_SERVICES.includes(transition.service) ? transition.service : this.service;
    this.#series("circuitTransitions", { service, to: transition.to }).record(1);
  }

  #recordThrottle(operation: OperationSeries, event: AttemptEvent, address: RequestAddress): void {
    const code = event.errorCode === undefined ? "none" : ERROR_CODE_LABELS.has(event.errorCode) ? event.errorCode : "other";
    // The status as it came (a sink bounds it, or keeps it an integer); absent without a response.
    this.#series("throttles", { ...operation.labels, status: event.status, error_code: code }).record(1);
    if (this.#partitionLabels === undefined) return;
    const scope = address.scopeKey;
    const partition = scope === undefined ? OTHER_PARTITION_LABEL : this.#partitionLabels.label(scope);
    this.#series("partitionThrottles", { service: this.service, partition }).record(1);
  }

  #operation(operation: StorageOperation): OperationSeries {
    return this.#byOperation.get(operation) ?? this.#bindOperation(operation);
  }

  #bindOperation(operation: StorageOperation): OperationSeries {
    const labels = { service: this.service, operation };
    const outcomes: Partial<Record<OperationOutcome, Series>> = {};
    // Bound up front: ratio queries need their denominators, alerts their first increase.
    for (const outcome of OUTCOMES_BOUND_UP_FRONT) outcomes[outcome] = this.#series("operations", { ...labels, outcome });
    for (const cls of RETRIABLE_CLASSES) this.#series("retriesExhausted", { ...labels, class: cls });
    const series: OperationSeries = { labels, attempts: {}, outcomes, durations: {} };
    this.#byOperation.set(operation, series);
    return series;
  }

  #series(metric: MetricKey, labels: Labels): Series {
    const key = `${metric}\u0000${Object.values(labels).join("\u0000")}`;
    let series = this.#bound.get(key);
    if (series === undefined) this.#bound.set(key, (series = this.#sink.series(metric, labels)));
    return series;
  }
}
