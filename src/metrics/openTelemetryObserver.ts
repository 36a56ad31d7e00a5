import type { Attributes } from "@opentelemetry/api";
import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import type { StorageOperation } from "../address/storageOperation.js";
import { AMBIGUOUS_WRITE_RESULTS } from "../ambiguousWrites/ambiguousWriteResult.js";
import type { CircuitState, CircuitStateSource, CircuitTransition } from "../breaker/circuitStateSource.js";
import type {
  AmbiguousWriteEvent,
  AttemptClass,
  AttemptEvent,
  LocalWaitEvent,
  LocalWaitReason,
  OperationEvent,
  RetryEvent,
} from "../observers/retryEvents.js";
import { LOCAL_REFUSALS } from "../observers/retryEvents.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { validateChoiceOption } from "../validation/optionSchema.js";
import { THROTTLE_ERROR_CODES, type OperationOutcome } from "./metricNames.js";
import type { MetricsObserver } from "./metricsObserver.js";
import { OPEN_TELEMETRY_ATTRIBUTES as ATTR } from "./openTelemetryNames.js";
import { openTelemetryInstruments, partitionLabelsFor, type OpenTelemetryInstruments } from "./openTelemetryInstruments.js";
import { resolveOpenTelemetryMetricsOptions, type OpenTelemetryMetricsOptions } from "./openTelemetryOptions.js";
import { isPacedScopeSource, type PacedScopeSource } from "./pacingMetrics.js";
import { outcomeOf, isExhausted } from "./operationOutcome.js";
import { OTHER_PARTITION_LABEL, type TopScopeLabels } from "./topScopeLabels.js";

/**
 * Creates the observer that records the package's metrics on an OpenTelemetry Meter for
 * `service`: the same measurements as the Prometheus sink, named by OpenTelemetry's
 * conventions (`OPEN_TELEMETRY_METRICS`, docs/metrics.md). `installResilience(client, { metrics: { meter } })`
 * adds it; call it yourself for a hand-built pipeline, or to record on both sinks at once.
 * Instruments are created once per meter and shared by every observer on it.
 *
 * @example
 * const observer = createOpenTelemetryMetricsObserver("table", { meter: meterProvider.getMeter("app") });
 * pipeline.addPolicy(resilientRetryPolicy({ observers: [observer] }), { phase: "Retry" });
 */
export function createOpenTelemetryMetricsObserver(service: StorageService, options: OpenTelemetryMetricsOptions = {}): MetricsObserver {
  validateChoiceOption("service", service, STORAGE_SERVICES);
  const resolved = resolveOpenTelemetryMetricsOptions(options, "");
  const instruments = openTelemetryInstruments(resolved.meter, resolved.bucketsInSeconds);
  const partitionLabels = resolved.partitionLabel === undefined ? undefined : partitionLabelsFor(instruments, service, resolved.partitionLabel);
  return new OpenTelemetryRecorder(service, instruments, partitionLabels);
}

const ERROR_CODES = new Set(THROTTLE_ERROR_CODES);

/**
 * The attribute objects one operation name needs, made once and passed as they are on every
 * event: the SDK still hashes them per call (there are no bound instruments in the API), but
 * nothing is allocated on the success path.
 */
interface OperationAttributes {
  readonly operation: StorageOperation;
  readonly attempts: Partial<Record<AttemptClass, Attributes>>;
  readonly retries: Partial<Record<AttemptClass, Attributes>>;
  readonly outcomes: Partial<Record<OperationOutcome, Attributes>>;
  readonly exhausted: Partial<Record<AttemptClass, Attributes>>;
  /** By status (undefined: no response), then error-code value. */
  readonly throttles: Map<number | undefined, Record<string, Attributes>>;
  plain: Attributes | undefined;
}

class OpenTelemetryRecorder implements MetricsObserver {
  readonly service: StorageService;
  readonly #instruments: OpenTelemetryInstruments;
  readonly #partitionLabels: TopScopeLabels | undefined;
  readonly #byOperation = new Map<StorageOperation, OperationAttributes>();
  readonly #byClass: Partial<Record<AttemptClass, Attributes>> = {};
  readonly #byReason: Partial<Record<AttemptClass, Attributes>> = {};
  readonly #byPartition = new Map<string, Attributes>();
  readonly #byTransition: Partial<Record<StorageService, Partial<Record<CircuitState, Attributes>>>> = {};
  readonly #ambiguous = new Map<string, Attributes>();
  readonly #serviceOnly: Attributes;
  readonly #byLocalReason: Partial<Record<LocalWaitReason, Attributes>> = {};
  readonly #subscriptions = new Set<() => void>();

  constructor(service: StorageService, instruments: OpenTelemetryInstruments, partitionLabels: TopScopeLabels | undefined) {
    this.service = service;
    this.#instruments = instruments;
    this.#partitionLabels = partitionLabels;
    this.#serviceOnly = { [ATTR.service]: service };
  }

  onAttempt(event: AttemptEvent): void {
    const address = this.#addressOf(event);
    const series = this.#seriesFor(address.operation);
    const cls = event.attemptClass;
    const { counters, histograms } = this.#instruments;
    const attributes = (series.attempts[cls] ??= { ...this.#base(series), [ATTR.class]: cls });
    counters.attempts.add(1, attributes);
    if (event.secondary === true) counters.secondaryReads.add(1, attributes);
    // Only attempts that waited, as in Prometheus: zeros from every unpaced attempt would bury the waits.
    if (event.pacedDelayInMs > 0) histograms.pacingDelay.record(event.pacedDelayInMs / 1000, this.#base(series));
    if (event.inChangeset === true) counters.batchChangesetFailures.add(1, this.#classOnly(cls));
    if (cls === "throttled") this.#recordThrottle(series, event, address);
    else if (cls === "circuit_open") counters.circuitRejections.add(1, this.#base(series));
  }

  onRetry(event: RetryEvent): void {
    const series = this.#seriesFor(this.#addressOf(event).operation);
    const reason = event.reason;
    const { counters, histograms } = this.#instruments;
    counters.retries.add(1, (series.retries[reason] ??= { ...this.#base(series), [ATTR.reason]: reason }));
    histograms.retryDelay.record(event.delayInMs / 1000, this.#reasonOnly(reason));
  }

  onOperationEnd(event: OperationEvent): void {
    const series = this.#seriesFor(this.#addressOf(event).operation);
    const outcome = outcomeOf(event.stopReason);
    const { counters, histograms } = this.#instruments;
    histograms.operationDuration.record(event.elapsedInMs / 1000, (series.outcomes[outcome] ??= { ...this.#base(series), [ATTR.outcome]: outcome }));
    if (isExhausted(event.stopReason)) {
      const cls = event.finalClass;
      counters.retriesExhausted.add(1, (series.exhausted[cls] ??= { ...this.#base(series), [ATTR.class]: cls }));
    }
    if (event.stopReason === "budget-exhausted") counters.retryBudgetExhausted.add(1, this.#serviceOnly);
    const refused = LOCAL_REFUSALS[event.stopReason];
    if (refused !== undefined) counters.localRefusals.add(1, this.#localReason(refused));
  }

  onLocalWait(event: LocalWaitEvent): void {
    this.#instruments.localWaits.add(event.state === "started" ? 1 : -1, this.#localReason(event.reason));
  }


  #localReason(reason: LocalWaitReason): Attributes {
    return (this.#byLocalReason[reason] ??= { [ATTR.service]: this.service, [ATTR.reason]: reason });
  }

  onAmbiguousWrite(event: AmbiguousWriteEvent): void {
    if (!AMBIGUOUS_WRITE_RESULTS.includes(event.result)) return;
    const key = `${event.operation}|${event.result}`;
    let attributes = this.#ambiguous.get(key);
    if (attributes === undefined) {
      attributes = { [ATTR.service]: this.service, [ATTR.operation]: event.operation, [ATTR.result]: event.result };
      this.#ambiguous.set(key, attributes);
    }
    this.#instruments.counters.ambiguousWritesResolved.add(1, attributes);
  }

  observeCircuits(source: CircuitStateSource & Partial<PacedScopeSource>): () => void {
    if (typeof source?.stateCounts !== "function" || typeof source.onTransition !== "function") {
      throw new TypeError("observeCircuits needs a CircuitStateSource (stateCounts() and onTransition()).");
    }
    const { circuitSources, pacingSources } = this.#instruments;
    const circuitEntry = { service: this.service, source };
    const pacingEntry = isPacedScopeSource(source) ? { service: this.service, source } : undefined;
    circuitSources.add(circuitEntry);
    if (pacingEntry) pacingSources.add(pacingEntry);
    const stopListening = source.onTransition((transition) => this.#recordTransition(transition));
    let active = true;
    const unsubscribe = (): void => {
      if (!active) return;
      active = false;
      circuitSources.delete(circuitEntry);
      if (pacingEntry) pacingSources.delete(pacingEntry);
      stopListening();
      this.#subscriptions.delete(unsubscribe);
    };
    this.#subscriptions.add(unsubscribe);
    return unsubscribe;
  }

  dispose(): void {
    for (const unsubscribe of [...this.#subscriptions]) unsubscribe();
  }

  #recordTransition(transition: CircuitTransition): void {
    // A transition that names no service we know counts under this observer's, as in Prometheus.
    const service = STORAGE_SERVICES.includes(transition.service) ? transition.service : this.service;
    const to = transition.to;
    if (to !== "closed" && to !== "open" && to !== "half_open") return;
    const byState = (this.#byTransition[service] ??= {});
    this.#instruments.counters.circuitTransitions.add(1, (byState[to] ??= { [ATTR.service]: service, [ATTR.to]: to }));
  }

  #recordThrottle(series: OperationAttributes, event: AttemptEvent, address: RequestAddress): void {
    const code = event.errorCode === undefined ? "none" : ERROR_CODES.has(event.errorCode) ? event.errorCode : "other";
    let byCode = series.throttles.get(event.status);
    if (byCode === undefined) series.throttles.set(event.status, (byCode = {}));
    let attributes = byCode[code];
    if (attributes === undefined) {
      // `http.response.status_code` is an integer in the conventions, absent without a response.
      attributes = { ...this.#base(series), [ATTR.error_code]: code };
      if (event.status !== undefined) attributes[ATTR.status] = event.status;
      byCode[code] = attributes;
    }
    this.#instruments.counters.throttles.add(1, attributes);
    if (this.#partitionLabels !== undefined) this.#recordPartitionThrottle(this.#partitionLabels, address);
  }

  /** Off the common path: only throttled attempts, and only with the opt-in attribute. */
  #recordPartitionThrottle(labels: TopScopeLabels, address: RequestAddress): void {
    const key = address.scopeKey;
    const partition = key === undefined ? OTHER_PARTITION_LABEL : labels.label(key);
    let attributes = this.#byPartition.get(partition);
    if (attributes === undefined) this.#byPartition.set(partition, (attributes = { [ATTR.service]: this.service, [ATTR.partition]: partition }));
    this.#instruments.counters.partitionThrottles.add(1, attributes);
  }

  #base(series: OperationAttributes): Attributes {
    return (series.plain ??= { [ATTR.service]: this.service, [ATTR.operation]: series.operation });
  }

  #classOnly(cls: AttemptClass): Attributes {
    return (this.#byClass[cls] ??= { [ATTR.service]: this.service, [ATTR.class]: cls });
  }

  #reasonOnly(reason: AttemptClass): Attributes {
    return (this.#byReason[reason] ??= { [ATTR.service]: this.service, [ATTR.reason]: reason });
  }

  /** The event's address, as read under this observer's service. */
  #addressOf(event: { request: PipelineRequest; address: RequestAddress }): RequestAddress {
    return event.address.service === this.service ? event.address : readRequestAddress(event.request, this.service);
  }

  #seriesFor(operation: StorageOperation): OperationAttributes {
    let series = this.#byOperation.get(operation);
    if (series === undefined) {
      series = { operation, attempts: {}, retries: {}, outcomes: {}, exhausted: {}, throttles: new Map(), plain: undefined };
      this.#byOperation.set(operation, series);
    }
    return series;
  }
}
