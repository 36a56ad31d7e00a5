// The Prometheus sink's observer: every metric the package records, on prom-client families.
// About 300 lines: one recorder whose series are bound once per operation name (the hot path is property
// lookups); the families (storageMetricFamilies.ts), circuits and pacing (circuitMetrics.ts, pacingMetrics.ts) are apart.
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import type { StorageOperation } from "../address/storageOperation.js";
import { OUTCOME_CLASSES, RETRIABLE_CLASSES, type OutcomeClass } from "../classification/outcomeClass.js";
import { AMBIGUOUS_WRITE_RESULTS } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { CircuitStateSource } from "../breaker/circuitStateSource.js";
import type { PartitionBreaker } from "../breaker/partitionBreaker.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type {
  AmbiguousWriteEvent,
  AttemptClass,
  AttemptEvent,
  LocalWaitEvent,
  LocalWaitReason,
  OperationEvent,
  RetryEvent,
  RetryObserver,
} from "../observers/retryEvents.js";
import { LOCAL_REFUSALS } from "../observers/retryEvents.js";
import type { GaugeCollector } from "./metricFamily.js";
import { isExhausted, outcomeOf } from "./operationOutcome.js";
import { createCircuitMetrics, type CircuitMetrics } from "./circuitMetrics.js";
import { createPacingMetrics, isPacedScopeSource, type PacedScopeSource, type PacingMetrics } from "./pacingMetrics.js";
import type { CounterChild, CounterFamily, HistogramChild } from "./metricFamily.js";
import { OPERATION_OUTCOMES, THROTTLE_ERROR_CODES, THROTTLE_STATUSES, type OperationOutcome } from "./metricNames.js";
import { resolveMetricsOptions, type MetricsOptions } from "./metricsOptions.js";
import { storageMetricFamilies, type StorageMetricFamilies } from "./storageMetricFamilies.js";
import { validateChoiceOption } from "../validation/optionSchema.js";
import { OTHER_PARTITION_LABEL, TopScopeLabels } from "./topScopeLabels.js";
import { LOCAL_WAIT_REASONS } from "../policies/callerPolicy.js";

/** A {@link RetryObserver} that records the package's metrics for one service, on Prometheus or OpenTelemetry. */
export interface MetricsObserver extends RetryObserver {
  /** The `service` label of everything this observer records. */
  readonly service: StorageService;
  /**
   * Reports a breaker's circuits (a `PartitionBreaker`, or anything with its `stateCounts()` and `onTransition()`): `circuit_breakers{service,state}` reads `stateCounts()` at
   * every scrape, and each transition counts in `circuit_transitions_total{service,to}`. A
   * source that also has `pacedScopes()` (a `PartitionBreaker` does) reports its pacing too:
   * `paced_partitions{service}`, and with the partition label on,
   * `partition_send_rate{service,partition}`, both read at scrape time.
   * Returns a function that stops all of them (also done by `dispose()`).
   */
  observeCircuits(breaker: Pick<PartitionBreaker, "stateCounts" | "onTransition"> & Partial<Pick<PartitionBreaker, "pacedScopes">>): () => void;
  /** Stops reporting circuits and pacing. Counters keep their values; recording hooks keep working. Idempotent. */
  dispose(): void;
}

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
  pacingDelay: HistogramChild | undefined;
}

/** The bounded partition label's state, shared by every observer of one service on one family. */
interface PartitionLabelState {
  labels: TopScopeLabels;
  children: Map<string, CounterChild>;
}
const partitionStates = new WeakMap<CounterFamily, Map<StorageService, PartitionLabelState>>();

/**
 * Creates the observer that `installResilience` appends to the retry policy (exported for
 * hand-built pipelines): every metric of docs/metrics.md, the data-safety and secondary-read
 * counters included. Families are found or registered on `options.registry` (default:
 * prom-client's `register`); creating many observers on one registry shares them.
 *
 * @example
 * const metrics = createMetricsObserver("table", { registry });
 * pipeline.addPolicy(resilientRetryPolicy({ observers: [metrics] }), { phase: "Retry" });
 */
export function createMetricsObserver(service: StorageService, options: MetricsOptions = {}): MetricsObserver {
  return createPrometheusObserver(service, options, true);
}

/**
 * {@link createMetricsObserver}, for `installResilience`: the secondary-read counter is
 * registered only when reads may go to the secondary (`withSecondaryReads`).
 */
export function createPrometheusObserver(service: StorageService, options: MetricsOptions, withSecondaryReads: boolean): MetricsObserver {
  validateChoiceOption("service", service, STORAGE_SERVICES);
  const resolved = resolveMetricsOptions(options, "");
  const families = storageMetricFamilies(
    resolved.registry,
    resolved.prefix,
    resolved.bucketsInSeconds,
    resolved.partitionLabel !== undefined,
    withSecondaryReads,
  );
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

class MetricsRecorder implements MetricsObserver {
  readonly service: StorageService;
  readonly #families: StorageMetricFamilies;
  readonly #partition: PartitionLabelState | undefined;
  readonly #circuits: CircuitMetrics;
  readonly #pacing: PacingMetrics;
  readonly #byOperation = new Map<StorageOperation, OperationSeries>();
  readonly #delays: Partial<Record<AttemptClass, HistogramChild>> = {};
  readonly #changesetFailures: Partial<Record<AttemptClass, CounterChild>> = {};
  /** By `operation|result`. */
  readonly #ambiguousWrites = new Map<string, CounterChild>();
  /** By `operation|class`. */
  readonly #secondaryReads = new Map<string, CounterChild>();
  readonly #budgetExhausted: CounterChild;
  /** Operations of this observer's policies waiting now, by reason; read at scrape time. */
  readonly #waiting: Record<LocalWaitReason, number> = { circuit: 0, pacing: 0, budget: 0, backoff: 0 };
  readonly #waitCollector: GaugeCollector;
  readonly #refusals: Partial<Record<LocalWaitReason, CounterChild>> = {};

  constructor(service: StorageService, families: StorageMetricFamilies, partition: PartitionLabelState | undefined) {
    this.service = service;
    this.#families = families;
    this.#partition = partition;
    this.#circuits = createCircuitMetrics(families, service);
    this.#pacing = createPacingMetrics(families, service, partition?.labels);
    // Bound at 0 up front, so rate() and alerts see the first budget exhaustion.
    this.#budgetExhausted = families.retryBudgetExhausted.child({ service });
    this.#waitCollector = (emit) => {
      for (const reason of LOCAL_WAIT_REASONS) emit({ service, reason }, this.#waiting[reason]);
    };
    families.localWaits.collectors.add(this.#waitCollector);
  }

  onLocalWait(event: LocalWaitEvent): void {
    this.#waiting[event.reason] += event.state === "started" ? 1 : -1;
  }

  #recordLocalRefusal(reason: LocalWaitReason): void {
    (this.#refusals[reason] ??= this.#families.localRefusals.child({ service: this.service, reason })).inc();
  }

  onAttempt(event: AttemptEvent): void {
    const address = this.#addressOf(event);
    const series = this.#seriesFor(address);
    const cls = event.attemptClass;
    (series.attempts[cls] ??= this.#families.attempts.child({ service: this.service, operation: series.operation, class: cls })).inc();
    // Only attempts that waited: zeros from every unpaced attempt would bury the waits (and cost the success path).
    if (event.pacedDelayInMs > 0) {
      (series.pacingDelay ??= this.#families.pacingDelay.child({ service: this.service, operation: series.operation })).observe(event.pacedDelayInMs / 1000);
    }
    if (event.inChangeset === true) {
      (this.#changesetFailures[cls] ??= this.#families.batchChangesetFailures.child({ service: this.service, class: cls })).inc();
    }
    if (cls === "throttled") this.#recordThrottle(series, event, address);
    else if (cls === "circuit_open") {
      (series.rejections ??= this.#families.circuitRejections.child({ service: this.service, operation: series.operation })).inc();
    }
    if (event.secondary === true) this.#recordSecondaryRead(series.operation, cls);
  }

  onRetry(event: RetryEvent): void {
    const series = this.#seriesFor(this.#addressOf(event));
    const reason = event.reason;
    (series.retries[reason] ??= this.#families.retries.child({ service: this.service, operation: series.operation, reason })).inc();
    (this.#delays[reason] ??= this.#families.retryDelay.child({ service: this.service, reason })).observe(event.delayInMs / 1000);
  }

  onOperationEnd(event: OperationEvent): void {
    const series = this.#seriesFor(this.#addressOf(event));
    const outcome = outcomeOf(event.stopReason);
    series.outcomes[outcome].inc();
    (series.durations[outcome] ??= this.#families.operationDuration.child({
      service: this.service,
      operation: series.operation,
      outcome,
    })).observe(event.elapsedInMs / 1000);
    if (isExhausted(event.stopReason)) {
      const cls = event.finalClass;
      (series.exhausted[cls] ??= this.#families.retriesExhausted.child({ service: this.service, operation: series.operation, class: cls })).inc();
    }
    if (event.stopReason === "budget-exhausted") this.#budgetExhausted.inc();
    const refused = LOCAL_REFUSALS[event.stopReason];
    if (refused !== undefined) this.#recordLocalRefusal(refused);
  }

  onAmbiguousWrite(event: AmbiguousWriteEvent): void {
    if (!AMBIGUOUS_WRITE_RESULTS.includes(event.result)) return;
    const key = `${event.operation}|${event.result}`;
    let child = this.#ambiguousWrites.get(key);
    if (child === undefined) {
      child = this.#families.ambiguousWritesResolved.child({ service: this.service, operation: event.operation, result: event.result });
      this.#ambiguousWrites.set(key, child);
    }
    child.inc();
  }

  observeCircuits(source: CircuitStateSource & Partial<PacedScopeSource>): () => void {
    const stopCircuits = this.#circuits.observe(source);
    if (!isPacedScopeSource(source)) return stopCircuits;
    const stopPacing = this.#pacing.observe(source);
    return () => {
      stopCircuits();
      stopPacing();
    };
  }

  dispose(): void {
    this.#circuits.dispose();
    this.#pacing.dispose();
    this.#families.localWaits.collectors.delete(this.#waitCollector);
  }

  /** The event's address, as read under this observer's service (its labels' service). */
  #addressOf(event: { request: PipelineRequest; address: RequestAddress }): RequestAddress {
    // An address read without this service (a policy given none) is read again under it.
    return event.address.service === this.service ? event.address : readRequestAddress(event.request, this.service);
  }

  #seriesFor(address: RequestAddress): OperationSeries {
    const operation = address.operation;
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
      pacingDelay: undefined,
    };
    this.#byOperation.set(operation, series);
    return series;
  }

  #recordThrottle(series: OperationSeries, event: AttemptEvent, address: RequestAddress): void {
    const status = event.status === undefined ? "none" : (STATUS_LABELS.get(event.status) ?? "other");
    const code = event.errorCode === undefined ? "none" : ERROR_CODE_LABELS.has(event.errorCode) ? event.errorCode : "other";
    const byCode = (series.throttles[status] ??= {});
    (byCode[code] ??= this.#families.throttles.child({ service: this.service, operation: series.operation, status, error_code: code })).inc();
    if (this.#partition !== undefined) this.#recordPartitionThrottle(this.#partition, address);
  }

  /** Off the common path: only attempts sent to the secondary region. */
  #recordSecondaryRead(operation: StorageOperation, cls: AttemptClass): void {
    const family = this.#families.secondaryReads;
    if (family === undefined || !OUTCOME_CLASSES.includes(cls as OutcomeClass)) return;
    const key = `${operation}|${cls}`;
    let child = this.#secondaryReads.get(key);
    if (child === undefined) {
      child = family.child({ service: this.service, operation, outcome: cls });
      this.#secondaryReads.set(key, child);
    }
    child.inc();
  }

  /** Off the common path: only throttled attempts, and only with the opt-in label. */
  #recordPartitionThrottle(state: PartitionLabelState, address: RequestAddress): void {
    const family = this.#families.partitionThrottles;
    if (family === undefined) return;
    const key = address.scopeKey;
    const label = key === undefined ? OTHER_PARTITION_LABEL : state.labels.label(key);
    let child = state.children.get(label);
    if (child === undefined) {
      child = family.child({ service: this.service, partition: label });
      state.children.set(label, child);
    }
    child.inc();
  }
}
