import type { Attributes, Counter, Histogram, Meter, ObservableResult, UpDownCounter } from "@opentelemetry/api";
import type { CircuitState, CircuitStateSource } from "../breaker/circuitStateSource.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import type { StorageService } from "../address/partitionScope.js";
import { OPEN_TELEMETRY_ATTRIBUTES as ATTR, OPEN_TELEMETRY_METRICS, type OpenTelemetryMetricKey } from "./openTelemetryNames.js";
import { isPartition, type PacedScope, type PacedScopeSource } from "./pacingMetrics.js";
import { OTHER_PARTITION_LABEL, TopScopeLabels } from "./topScopeLabels.js";

/** A breaker reported on the circuit instruments, under the service of the observer that added it. */
export interface CircuitSourceEntry {
  readonly service: StorageService;
  readonly source: CircuitStateSource;
}

/** A breaker reported on the pacing instruments. */
export interface PacingSourceEntry {
  readonly service: StorageService;
  readonly source: PacedScopeSource;
}

/**
 * The instruments of one Meter, shared by every observer created on it: OpenTelemetry keeps one
 * series per attribute set, and an observable's callbacks each report the whole value, so two
 * installs must share one callback that sums their breakers (as the Prometheus gauge sums collectors).
 */
export interface OpenTelemetryInstruments {
  readonly bucketsInSeconds: readonly number[];
  readonly counters: Readonly<Record<Exclude<OpenTelemetryMetricKey, HistogramKey | ObservableKey | "localWaits">, Counter>>;
  /** Operations waiting now, by reason: added to when a wait starts, taken from when it ends. */
  readonly localWaits: UpDownCounter;
  readonly histograms: Readonly<Record<HistogramKey, Histogram>>;
  /** Breakers whose circuits (and pacing, if they have it) are read at collection time. */
  readonly circuitSources: Set<CircuitSourceEntry>;
  readonly pacingSources: Set<PacingSourceEntry>;
  /** The bounded partition attribute's state per service; only with the opt-in. */
  readonly partitionLabels: Map<StorageService, TopScopeLabels>;
}

type HistogramKey = "operationDuration" | "retryDelay" | "pacingDelay";
type ObservableKey = "circuitBreakers" | "pacedPartitions" | "partitionSendRate" | "pacedAccounts" | "accountSendRate";

const CIRCUIT_STATES: readonly CircuitState[] = ["closed", "open", "half_open"];
const shared = new WeakMap<Meter, OpenTelemetryInstruments>();

/**
 * The instruments on `meter`, created on first use. Every observer on one meter must use the
 * same histogram buckets, as on one Prometheus registry.
 */
export function openTelemetryInstruments(meter: Meter, bucketsInSeconds: readonly number[]): OpenTelemetryInstruments {
  const existing = shared.get(meter);
  if (existing !== undefined) {
    if (!sameList(existing.bucketsInSeconds, bucketsInSeconds)) {
      throw new Error(
        `The OpenTelemetry instruments on this meter already advise buckets [${existing.bucketsInSeconds.join(", ")}], ` +
          `not [${bucketsInSeconds.join(", ")}]. Every install on one meter must use the same metrics.bucketsInSeconds.`,
      );
    }
    return existing;
  }
  const counter = (key: OpenTelemetryMetricKey): Counter => {
    const spec = OPEN_TELEMETRY_METRICS[key];
    return meter.createCounter(spec.name, { unit: spec.unit, description: spec.description });
  };
  const histogram = (key: HistogramKey): Histogram => {
    const spec = OPEN_TELEMETRY_METRICS[key];
    return meter.createHistogram(spec.name, { unit: spec.unit, description: spec.description, advice: { explicitBucketBoundaries: [...bucketsInSeconds] } });
  };
  const instruments: OpenTelemetryInstruments = {
    bucketsInSeconds,
    counters: {
      attempts: counter("attempts"),
      retries: counter("retries"),
      throttles: counter("throttles"),
      retriesExhausted: counter("retriesExhausted"),
      circuitTransitions: counter("circuitTransitions"),
      circuitRejections: counter("circuitRejections"),
      partitionThrottles: counter("partitionThrottles"),
      batchChangesetFailures: counter("batchChangesetFailures"),
      secondaryReads: counter("secondaryReads"),
      ambiguousWritesResolved: counter("ambiguousWritesResolved"),
      retryBudgetExhausted: counter("retryBudgetExhausted"),
      localRefusals: counter("localRefusals"),
    },
    localWaits: meter.createUpDownCounter(OPEN_TELEMETRY_METRICS.localWaits.name, {
      unit: OPEN_TELEMETRY_METRICS.localWaits.unit,
      description: OPEN_TELEMETRY_METRICS.localWaits.description,
    }),
    histograms: { operationDuration: histogram("operationDuration"), retryDelay: histogram("retryDelay"), pacingDelay: histogram("pacingDelay") },
    circuitSources: new Set(),
    pacingSources: new Set(),
    partitionLabels: new Map(),
  };
  observeCircuitStates(meter, instruments);
  observePacing(meter, instruments);
  shared.set(meter, instruments);
  return instruments;
}

/** The bounded partition attribute's labels for `service` on these instruments; the first install's bounds win, as in Prometheus. */
export function partitionLabelsFor(instruments: OpenTelemetryInstruments, service: StorageService, bounds: { topN: number; minThrottles: number }): TopScopeLabels {
  let labels = instruments.partitionLabels.get(service);
  if (labels === undefined) instruments.partitionLabels.set(service, (labels = new TopScopeLabels(bounds.topN, bounds.minThrottles)));
  return labels;
}

function observeCircuitStates(meter: Meter, instruments: OpenTelemetryInstruments): void {
  const spec = OPEN_TELEMETRY_METRICS.circuitBreakers;
  const gauge = meter.createObservableUpDownCounter(spec.name, { unit: spec.unit, description: spec.description });
  gauge.addCallback((result: ObservableResult) => {
    const sums = new Map<StorageService, Record<CircuitState, number>>();
    for (const { service, source } of instruments.circuitSources) {
      const counts = readSafely(() => source.stateCounts(), "circuit state source");
      if (counts === undefined) continue;
      let sum = sums.get(service);
      if (sum === undefined) sums.set(service, (sum = { closed: 0, open: 0, half_open: 0 }));
      for (const state of CIRCUIT_STATES) sum[state] += counts[state] ?? 0;
    }
    for (const [service, sum] of sums) {
      for (const state of CIRCUIT_STATES) result.observe(sum[state], { [ATTR.service]: service, [ATTR.state]: state });
    }
  });
}

function observePacing(meter: Meter, instruments: OpenTelemetryInstruments): void {
  const countSpec = OPEN_TELEMETRY_METRICS.pacedPartitions;
  const rateSpec = OPEN_TELEMETRY_METRICS.partitionSendRate;
  const count = meter.createObservableUpDownCounter(countSpec.name, { unit: countSpec.unit, description: countSpec.description });
  const rate = meter.createObservableGauge(rateSpec.name, { unit: rateSpec.unit, description: rateSpec.description });
  const read = (): Array<{ service: StorageService; paced: readonly PacedScope[] }> => {
    const all: Array<{ service: StorageService; paced: readonly PacedScope[] }> = [];
    for (const { service, source } of instruments.pacingSources) {
      const paced = readSafely(() => source.pacedScopes(), "paced scope source");
      if (paced !== undefined) all.push({ service, paced });
    }
    return all;
  };
  count.addCallback((result: ObservableResult) => {
    const sums = new Map<StorageService, number>();
    for (const { service, paced } of read()) sums.set(service, (sums.get(service) ?? 0) + paced.filter(isPartition).length);
    for (const [service, sum] of sums) result.observe(sum, { [ATTR.service]: service });
  });
  const accountCountSpec = OPEN_TELEMETRY_METRICS.pacedAccounts;
  const accountRateSpec = OPEN_TELEMETRY_METRICS.accountSendRate;
  const accountCount = meter.createObservableUpDownCounter(accountCountSpec.name, { unit: accountCountSpec.unit, description: accountCountSpec.description });
  const accountRate = meter.createObservableGauge(accountRateSpec.name, { unit: accountRateSpec.unit, description: accountRateSpec.description });
  accountCount.addCallback((result: ObservableResult) => {
    const sums = new Map<StorageService, number>();
    for (const { service, paced } of read()) sums.set(service, (sums.get(service) ?? 0) + paced.filter((p) => !isPartition(p)).length);
    for (const [service, sum] of sums) result.observe(sum, { [ATTR.service]: service });
  });
  accountRate.addCallback((result: ObservableResult) => {
    const sums = new Map<StorageService, number>();
    for (const { service, paced } of read()) {
      for (const p of paced) if (!isPartition(p) && Number.isFinite(p.ratePerSecond)) sums.set(service, (sums.get(service) ?? 0) + p.ratePerSecond);
    }
    // No observation while no account is paced, as in Prometheus.
    for (const [service, sum] of sums) result.observe(sum, { [ATTR.service]: service });
  });
  rate.addCallback((result: ObservableResult) => {
    const sums = new Map<string, { attributes: Attributes; value: number }>();
    for (const { service, paced } of read()) {
      const labels = instruments.partitionLabels.get(service);
      // Without the opt-in there is no partition attribute, so no send rate: as in Prometheus.
      if (labels === undefined) continue;
      for (const { scope, ratePerSecond } of paced.filter(isPartition)) {
        if (!Number.isFinite(ratePerSecond)) continue;
        const partition = labels.has(scope) ? scope : OTHER_PARTITION_LABEL;
        const key = `${service}|${partition}`;
        const entry = sums.get(key);
        if (entry) entry.value += ratePerSecond;
        else sums.set(key, { attributes: { [ATTR.service]: service, [ATTR.partition]: partition }, value: ratePerSecond });
      }
    }
    for (const { attributes, value } of sums.values()) result.observe(value, attributes);
  });
}

/** A source that throws during collection is skipped and logged by its error's name only. */
function readSafely<T>(read: () => T, what: string): T | undefined {
  try {
    return read();
  } catch (error) {
    logger.warning(`A ${what} threw during an OpenTelemetry collection and was skipped: ${safeErrorCode((error as Error | undefined)?.name) ?? "error"}`);
    return undefined;
  }
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((item, index) => item === b[index]);
}
