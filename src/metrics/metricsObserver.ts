import type { PipelineRequest } from "@azure/core-rest-pipeline";
import type { CircuitState, CircuitStateSource, CircuitTransition } from "../breaker/circuitStateSource.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import { requestScopeKey } from "../partition/requestScopeKey.js";
import { STORAGE_SERVICES, type StorageService } from "../partition/partitionScope.js";
import { recordFirstTrySuccess, type FirstTrySuccessRecorder } from "../policies/firstTrySuccess.js";
import type { AttemptClass, AttemptEvent, OperationEvent, RetryEvent, RetryObserver, StopReason } from "../policies/retryEvents.js";
import type { CounterChild, CounterFamily, GaugeCollector, HistogramChild } from "./metricFamily.js";
import { OPERATION_OUTCOMES, THROTTLE_ERROR_CODES, THROTTLE_STATUSES, type OperationOutcome } from "./metricNames.js";
import { resolveMetricsOptions, type MetricsOptions } from "./metricsOptions.js";
import { OperationNamer } from "./operationNamer.js";
import { describeValue } from "../validation/describeValue.js";
import { storageMetricFamilies, type StorageMetricFamilies } from "./storageMetricFamilies.js";
import type { StorageOperation } from "./storageOperation.js";
import { OTHER_PARTITION_LABEL, TopScopeLabels } from "./topScopeLabels.js";

/** A {@link RetryObserver} that records the package's Prometheus metrics for one service. */
export interface MetricsObserver extends RetryObserver {
  /** The `service` label of everything this observer records. */
  readonly service: StorageService;
  /**
   * Reports a breaker's circuits: `circuit_breakers{service,state}` reads `stateCounts()` at
   * every scrape, and each transition counts in `circuit_transitions_total{service,to}`.
   * Returns a function that stops both (also done by `dispose()`).
   */
  observeCircuits(source: CircuitStateSource): () => void;
  /** Stops reporting circuits. Counters keep their values; recording hooks keep working. Idempotent. */
  dispose(): void;
}

/** How an operation's stop reason reads as the `outcome` label. */
const OUTCOME_BY_STOP_REASON: Readonly<Record<StopReason, OperationOutcome>> = {
  success: "success",
  aborted: "aborted",
  "circuit-open": "circuit_open",
  permanent: "failure",
  "retries-exhausted": "failure",
  deadline: "failure",
  "body-not-replayable": "failure",
  "budget-exhausted": "failure",
  "partition-busy": "failure",
};

/** Stop reasons that mean "gave up on a retriable failure": retries, deadline or retry budget spent. */
const EXHAUSTED_STOP_REASONS: ReadonlySet<StopReason> = new Set<StopReason>(["retries-exhausted", "deadline", "budget-exhausted"]);

/** Classes pre-initialised at 0 in `retries_exhausted_total`, so `increase()` sees the first one. */
const RETRIABLE_CLASSES: readonly AttemptClass[] = ["throttled", "transient", "timeout"];
const CIRCUIT_STATES: readonly CircuitState[] = ["closed", "open", "half_open"];
const STATUS_LABELS = new Map(THROTTLE_STATUSES.map((status) => [status, String(status)]));
const ERROR_CODE_LABELS = new Set(THROTTLE_ERROR_CODES);

/** Every child one operation name needs, bound once and then reached by property lookups. */
interface OperationSeries {
  readonly operation: StorageOperation;
  readonly attempts: Partial<Record<AttemptClass, CounterChild>>;
  readonly retries: Partial<Record<AttemptClass, CounterChild>>;
  readonly outcomes: Readonly<Record<OperationOutcome, CounterChild>>;
  readonly durations: Partial<Record<OperationOutcome, HistogramChild>>;
  readonly exhausted: Partial<Record<AttemptClass, CounterChild>>;
  /** By status label, then error-code label. */
  readonly throttles: Record<string, Record<string, CounterChild>>;
  rejections: CounterChild | undefined;
}

/** The bounded partition label's state, shared by every observer of one service on one family. */
interface PartitionLabelState {
  labels: TopScopeLabels;
  children: Map<string, CounterChild>;
}
const partitionStates = new WeakMap<CounterFamily, Map<StorageService, PartitionLabelState>>();

/**
 * Creates the observer that `installResilience` appends to the retry policy (exported for
 * hand-built pipelines). Families are found or registered on `options.registry` (default:
 * prom-client's `register`); creating many observers on one registry shares them.
 *
 * @example
 * const metrics = createMetricsObserver("table", { registry });
 * pipeline.addPolicy(resilientRetryPolicy({ observers: [metrics] }), { phase: "Retry" });
 */
export function createMetricsObserver(service: StorageService, options: MetricsOptions = {}): MetricsObserver {
  if (!STORAGE_SERVICES.includes(service)) {
    throw new TypeError(`service must be one of ${STORAGE_SERVICES.map((s) => JSON.stringify(s)).join(", ")}; got ${describeValue(service)}.`);
  }
  const resolved = resolveMetricsOptions(options);
  const families = storageMetricFamilies(resolved.registry, resolved.prefix, resolved.bucketsInSeconds, resolved.partitionLabel !== undefined);
  let partition: PartitionLabelState | undefined;
  if (families.partitionThrottles !== undefined && resolved.partitionLabel !== undefined) {
    partition = partitionState(families.partitionThrottles, service, resolved.partitionLabel);
  }
  return new MetricsRecorder(service, families, partition);
}

function partitionState(
  family: CounterFamily,
  service: StorageService,
  bounds: { topN: number; minThrottles: number },
): PartitionLabelState {
  let byService = partitionStates.get(family);
  if (byService === undefined) partitionStates.set(family, (byService = new Map()));
  let state = byService.get(service);
  if (state === undefined) {
    // The first install's bounds win for the service: one budget of topN + 1 series per service and registry.
    state = { labels: new TopScopeLabels(bounds.topN, bounds.minThrottles), children: new Map() };
    byService.set(service, state);
  }
  return state;
}

class MetricsRecorder implements MetricsObserver, FirstTrySuccessRecorder {
  readonly service: StorageService;
  readonly #families: StorageMetricFamilies;
  readonly #partition: PartitionLabelState | undefined;
  readonly #namer: OperationNamer;
  readonly #byOperation = new Map<StorageOperation, OperationSeries>();
  /**
   * The last request named and its series: one operation's hooks (attempt, then end) follow
   * each other unless operations interleave, and naming is a pure function of the request, so
   * a miss only costs a recomputation. Cleared at the operation's end, so no request is kept.
   */
  #lastRequest: PipelineRequest | undefined;
  #lastSeries: OperationSeries | undefined;
  readonly #delays: Partial<Record<AttemptClass, HistogramChild>> = {};
  readonly #transitions = new Map<StorageService, Partial<Record<CircuitState, CounterChild>>>();
  readonly #subscriptions = new Set<() => void>();

  constructor(service: StorageService, families: StorageMetricFamilies, partition: PartitionLabelState | undefined) {
    this.service = service;
    this.#families = families;
    this.#partition = partition;
    this.#namer = new OperationNamer(service);
  }

  onAttempt(event: AttemptEvent): void {
    const series = this.#seriesFor(event.request);
    const cls = event.attemptClass;
    (series.attempts[cls] ??= this.#families.attempts.child({ service: this.service, operation: series.operation, class: cls })).inc();
    if (cls === "throttled") this.#recordThrottle(series, event);
    else if (cls === "circuit_open") {
      (series.rejections ??= this.#families.circuitRejections.child({ service: this.service, operation: series.operation })).inc();
    }
  }

  /** An operation that succeeded on its first attempt: what `onAttempt` and `onOperationEnd` would record, in one call. */
  [recordFirstTrySuccess](request: PipelineRequest, elapsedInMs: number): void {
    const series = this.#seriesNamed(request); // no other hook follows: nothing to remember
    (series.attempts.success ??= this.#families.attempts.child({ service: this.service, operation: series.operation, class: "success" })).inc();
    series.outcomes.success.inc();
    (series.durations.success ??= this.#families.operationDuration.child({
      service: this.service,
      operation: series.operation,
      outcome: "success",
    })).observe(elapsedInMs / 1000);
  }

  onRetry(event: RetryEvent): void {
    const series = this.#seriesFor(event.request);
    const reason = event.reason;
    (series.retries[reason] ??= this.#families.retries.child({ service: this.service, operation: series.operation, reason })).inc();
    (this.#delays[reason] ??= this.#families.retryDelay.child({ service: this.service, reason })).observe(event.delayInMs / 1000);
  }

  onOperationEnd(event: OperationEvent): void {
    const request = event.request;
    const series = this.#seriesFor(request);
    if (request === this.#lastRequest) {
      this.#lastRequest = undefined;
      this.#lastSeries = undefined;
    }
    const outcome = OUTCOME_BY_STOP_REASON[event.stopReason] ?? "failure";
    series.outcomes[outcome].inc();
    (series.durations[outcome] ??= this.#families.operationDuration.child({
      service: this.service,
      operation: series.operation,
      outcome,
    })).observe(event.elapsedInMs / 1000);
    if (EXHAUSTED_STOP_REASONS.has(event.stopReason)) {
      const cls = event.finalClass;
      (series.exhausted[cls] ??= this.#families.retriesExhausted.child({ service: this.service, operation: series.operation, class: cls })).inc();
    }
  }

  observeCircuits(source: CircuitStateSource): () => void {
    if (typeof source?.stateCounts !== "function" || typeof source.onTransition !== "function") {
      throw new TypeError("observeCircuits needs a CircuitStateSource (stateCounts() and onTransition()).");
    }
    const service = this.service;
    const collector: GaugeCollector = (emit) => {
      let counts: Record<CircuitState, number>;
      try {
        counts = source.stateCounts();
      } catch (error) {
        logger.warning(`A circuit state source threw during a metrics scrape and was skipped: ${safeErrorCode((error as Error | undefined)?.name) ?? "error"}`);
        return;
      }
      for (const state of CIRCUIT_STATES) emit({ service, state }, counts[state] ?? 0);
    };
    const gauge = this.#families.circuitBreakers;
    gauge.collectors.add(collector);
    const stopListening = source.onTransition((transition) => this.#recordTransition(transition));
    let active = true;
    const unsubscribe = (): void => {
      if (!active) return;
      active = false;
      gauge.collectors.delete(collector);
      stopListening();
      this.#subscriptions.delete(unsubscribe);
    };
    this.#subscriptions.add(unsubscribe);
    return unsubscribe;
  }

  dispose(): void {
    for (const unsubscribe of [...this.#subscriptions]) unsubscribe();
  }

  #seriesFor(request: PipelineRequest): OperationSeries {
    if (request === this.#lastRequest) return this.#lastSeries as OperationSeries;
    const series = this.#seriesNamed(request);
    this.#lastRequest = request;
    this.#lastSeries = series;
    return series;
  }

  #seriesNamed(request: PipelineRequest): OperationSeries {
    const operation = this.#namer.name(request);
    return this.#byOperation.get(operation) ?? this.#createSeries(operation);
  }

  #createSeries(operation: StorageOperation): OperationSeries {
    const base = { service: this.service, operation };
    const outcomes = {} as Record<OperationOutcome, CounterChild>;
    // Bound (and so exported at 0) up front: ratio queries need their denominators, alerts their first increase.
    for (const outcome of OPERATION_OUTCOMES) outcomes[outcome] = this.#families.operations.child({ ...base, outcome });
    const exhausted: Partial<Record<AttemptClass, CounterChild>> = {};
    for (const cls of RETRIABLE_CLASSES) exhausted[cls] = this.#families.retriesExhausted.child({ ...base, class: cls });
    const series: OperationSeries = {
      operation,
      attempts: {},
      retries: {},
      outcomes,
      durations: {},
      exhausted,
      throttles: {},
      rejections: undefined,
    };
    this.#byOperation.set(operation, series);
    return series;
  }

  #recordThrottle(series: OperationSeries, event: AttemptEvent): void {
    const status = event.status === undefined ? "none" : (STATUS_LABELS.get(event.status) ?? "other");
    const code = event.errorCode === undefined ? "none" : ERROR_CODE_LABELS.has(event.errorCode) ? event.errorCode : "other";
    const byCode = (series.throttles[status] ??= {});
    (byCode[code] ??= this.#families.throttles.child({ service: this.service, operation: series.operation, status, error_code: code })).inc();
    if (this.#partition !== undefined) this.#recordPartitionThrottle(this.#partition, event.request);
  }

  /** Off the common path: only throttled attempts, and only with the opt-in label. */
  #recordPartitionThrottle(state: PartitionLabelState, request: PipelineRequest): void {
    const family = this.#families.partitionThrottles;
    if (family === undefined) return;
    const scope = requestScopeKey(request, this.service);
    const label = scope === undefined ? OTHER_PARTITION_LABEL : state.labels.label(scope.key);
    let child = state.children.get(label);
    if (child === undefined) {
      child = family.child({ service: this.service, partition: label });
      state.children.set(label, child);
    }
    child.inc();
  }

  #recordTransition(transition: CircuitTransition): void {
    const service = STORAGE_SERVICES.includes(transition.service) ? transition.service : this.service;
    const to = transition.to;
    if (!CIRCUIT_STATES.includes(to)) return;
    let byState = this.#transitions.get(service);
    if (byState === undefined) this.#transitions.set(service, (byState = {}));
    (byState[to] ??= this.#families.circuitTransitions.child({ service, to })).inc();
  }
}
