import type { PacedScope } from "../flow/pacedScope.js";
import { logger } from "../logging/logger.js";
import { safeErrorCode } from "../logging/safeErrorCode.js";
import type { StorageService } from "../address/partitionScope.js";
import type { GaugeCollector } from "./metricFamily.js";
import type { StorageMetricFamilies } from "./storageMetricFamilies.js";
import { OTHER_PARTITION_LABEL, type TopScopeLabels } from "./topScopeLabels.js";

export type { PacedScope };

/** What the metrics layer reads about pacing: a `PartitionBreaker` is one. */
export interface PacedScopeSource {
  /** Scopes whose attempts are paced now, with their current send rates. */
  pacedScopes(): readonly PacedScope[];
}

/** Reports breakers' paced scopes on one service's metric families. */
export interface PacingMetrics {
  /**
   * `paced_partitions{service}`, `paced_accounts{service}` and `account_send_rate{service}`
   * read `source.pacedScopes()` at every scrape, and with the partition label on, so does
   * `partition_send_rate{service,partition}`. Returns a function that stops them all (also
   * done by `dispose()`).
   */
  observe(source: PacedScopeSource): () => void;
  /** Stops reporting every source observed. Idempotent. */
  dispose(): void;
}

/** True when `source` can report paced scopes (a breaker built with pacing; a test double may not). */
export function isPacedScopeSource(source: unknown): source is PacedScopeSource {
  return typeof (source as Partial<PacedScopeSource> | undefined)?.pacedScopes === "function";
}

/**
 * Creates the pacing reporting behind `MetricsObserver.observeCircuits` for `service`.
 * `labels` is the service's bounded partition label (undefined without the opt-in): a paced
 * scope's rate gets its own series only if the scope earned a label by its throttles; the
 * rest are summed under `other`, so the series count stays at most `topN + 1`.
 */
export function createPacingMetrics(
  families: Pick<StorageMetricFamilies, "pacedPartitions" | "partitionSendRate" | "pacedAccounts" | "accountSendRate">,
  service: StorageService,
  labels: TopScopeLabels | undefined,
): PacingMetrics {
  const subscriptions = new Set<() => void>();

  return {
    observe(source) {
      if (!isPacedScopeSource(source)) throw new TypeError("Pacing metrics need a PacedScopeSource (pacedScopes()).");
      // Read at scrape time, as the circuit gauge: nothing is recorded on the request path.
      const read = (): readonly PacedScope[] | undefined => {
        try {
          return source.pacedScopes();
        } catch (error) {
          logger.warning(`A paced scope source threw during a metrics scrape and was skipped: ${safeErrorCode((error as Error | undefined)?.name) ?? "error"}`);
          return undefined;
        }
      };
      const countCollector: GaugeCollector = (emit) => {
        const paced = read();
        if (paced !== undefined) emit({ service }, paced.filter(isPartition).length);
      };
      const accountCountCollector: GaugeCollector = (emit) => {
        const paced = read();
        if (paced !== undefined) emit({ service }, paced.length - paced.filter(isPartition).length);
      };
      const accountRateCollector: GaugeCollector = (emit) => {
        const paced = read();
        if (paced === undefined) return;
        const accounts = paced.filter((p) => !isPartition(p) && Number.isFinite(p.ratePerSecond));
        // No series while no account is paced: a 0 would read as "held to nothing".
        if (accounts.length > 0) emit({ service }, accounts.reduce((sum, p) => sum + p.ratePerSecond, 0));
      };
      const rateCollector: GaugeCollector = (emit) => {
        const paced = labels === undefined ? undefined : read();
        if (paced === undefined || labels === undefined) return;
        for (const { scope, ratePerSecond } of paced.filter(isPartition)) {
          // A scope without its own label adds its rate to `other`: the send rate the rest are held to, together.
          if (Number.isFinite(ratePerSecond)) emit({ service, partition: labels.has(scope) ? scope : OTHER_PARTITION_LABEL }, ratePerSecond);
        }
      };
      const count = families.pacedPartitions;
      const rate = families.partitionSendRate;
      count.collectors.add(countCollector);
      rate?.collectors.add(rateCollector);
      families.pacedAccounts.collectors.add(accountCountCollector);
      families.accountSendRate.collectors.add(accountRateCollector);
      let active = true;
      const unsubscribe = (): void => {
        if (!active) return;
        active = false;
        count.collectors.delete(countCollector);
        rate?.collectors.delete(rateCollector);
        families.pacedAccounts.collectors.delete(accountCountCollector);
        families.accountSendRate.collectors.delete(accountRateCollector);
        subscriptions.delete(unsubscribe);
      };
      subscriptions.add(unsubscribe);
      return unsubscribe;
    },
    dispose() {
      for (const unsubscribe of [...subscriptions]) unsubscribe();
    },
  };
}

/** A partition's entry (an entry without `level`, from an older or hand-written source, is one). */
export function isPartition(scope: PacedScope): boolean {
  return scope.level !== "account";
}
