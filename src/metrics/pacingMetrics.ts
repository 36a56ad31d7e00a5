// The gauges read from a breaker at scrape (or collection) time, its circuits and its pacing,
// and how every sink sums them: nothing is recorded on the request path.
import type { CircuitState, CircuitStateSource, PacedScope } from "../breaker/partitionBreakerInterface.js";
import { logger } from "../logging/logger.js";
import { safeErrorName } from "../logging/safeErrorCode.js";
import type { StorageService } from "../address/partitionScope.js";
import type { Labels } from "./metricNames.js";
import { OTHER_PARTITION_LABEL, type TopScopeLabels } from "./topScopeLabels.js";

export type { PacedScope };

/** What the metrics layer reads about pacing: a `PartitionBreaker` is one. */
export interface PacedScopeSource {
  /** Scopes whose attempts are paced now, with their current send rates. */
  pacedScopes(): readonly PacedScope[];
}

/** Reports one gauge's series when it is read; values emitted for one label set are summed. */
export type GaugeReader = (emit: (labels: Labels, value: number) => void) => void;

/** The gauges a breaker feeds. */
export type BreakerGauge = "circuitBreakers" | "pacedPartitions" | "pacedAccounts" | "accountSendRate" | "partitionSendRate";

export const CIRCUIT_STATES: readonly CircuitState[] = ["closed", "open", "half_open"];

/**
 * The readers of `source`'s gauges under `service`. Pacing only when the source can report it
 * (a breaker built with pacing; a test double may not). `partitionLabels` is the service's
 * bounded partition label (undefined without the opt-in): a paced scope's rate gets its own
 * series only if the scope earned a label by its throttles, the rest are summed under `other`.
 */
export function breakerGauges(
  service: StorageService,
  source: CircuitStateSource & Partial<PacedScopeSource>,
  partitionLabels: TopScopeLabels | undefined,
): Array<[BreakerGauge, GaugeReader]> {
  const readers: Array<[BreakerGauge, GaugeReader]> = [
    [
      "circuitBreakers",
      (emit) => {
        const counts = source.stateCounts();
        for (const state of CIRCUIT_STATES) emit({ service, state }, counts[state] ?? 0);
      },
    ],
  ];
  if (typeof source.pacedScopes !== "function") return readers;
  // An entry without `level` (from an older or hand-written source) is a partition's.
  const scopes = (accounts: boolean): PacedScope[] => (source as PacedScopeSource).pacedScopes().filter((p) => (p.level === "account") === accounts);
  readers.push(
    ["pacedPartitions", (emit) => emit({ service }, scopes(false).length)],
    ["pacedAccounts", (emit) => emit({ service }, scopes(true).length)],
    [
      "accountSendRate",
      (emit) => {
        const rates = scopes(true).map((p) => p.ratePerSecond).filter(Number.isFinite);
        // No series while no account is paced: a 0 would read as "held to nothing".
        if (rates.length > 0) emit({ service }, rates.reduce((sum, rate) => sum + rate, 0));
      },
    ],
  );
  if (partitionLabels === undefined) return readers;
  readers.push([
    "partitionSendRate",
    (emit) => {
      for (const { scope, ratePerSecond } of scopes(false)) {
        // A scope without its own label adds its rate to `other`: the send rate the rest are held to, together.
        if (Number.isFinite(ratePerSecond)) emit({ service, partition: partitionLabels.has(scope) ? scope : OTHER_PARTITION_LABEL }, ratePerSecond);
      }
    },
  ]);
  return readers;
}

/**
 * Every series of one gauge, summed over `readers` by label set. A reader whose source throws
 * costs its own series, not the scrape; it is logged by its error's name only.
 */
export function readGauge(readers: Iterable<GaugeReader>): Array<{ labels: Labels; value: number }> {
  const sums = new Map<string, { labels: Labels; value: number }>();
  const emit = (labels: Labels, value: number): void => {
    const key = Object.values(labels).join("\u0000");
    const sum = sums.get(key);
    if (sum === undefined) sums.set(key, { labels, value });
    else sum.value += value;
  };
  for (const read of readers) {
    try {
      read(emit);
    } catch (error) {
      logger.warning(`A breaker threw while its metrics were read and was skipped: ${safeErrorName(error)}`);
    }
  }
  return [...sums.values()];
}
