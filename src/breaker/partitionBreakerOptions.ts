import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { STORAGE_SERVICES, type StorageService } from "../partition/partitionScope.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { optionalNumberOption } from "../validation/validateNumberOption.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";

/**
 * What an attempt meets when its partition's circuit is open: `"wait"` makes the retry
 * policy sleep until the next probe (within its deadline), `"fail"` surfaces a
 * `CircuitOpenError` to the caller at once.
 */
export type PartitionBreakerMode = "wait" | "fail";

/** Every {@link PartitionBreakerMode}. */
export const PARTITION_BREAKER_MODES: readonly PartitionBreakerMode[] = ["wait", "fail"];

/**
 * Options of `createPartitionBreaker` and of `installResilience`'s `circuitBreaker`.
 * Every one is optional; docs/circuit-breaker.md explains each default.
 */
export interface PartitionBreakerOptions {
  /** What callers meet while a circuit is open. Defaults to `"wait"`. */
  mode?: PartitionBreakerMode;
  /**
   * The service the requests go to, needed to scope Azurite's path-style URLs.
   * Defaults to detection from the host; `installResilience` passes its own.
   */
  service?: StorageService;
  /**
   * Your own scope key for a request (no secrets: it is logged and put in errors);
   * `undefined` lets the request bypass the breaker. Defaults to the partition scope
   * (account + table + PartitionKey, account + container + blob, account + queue).
   */
  getScope?: (request: PipelineRequest) => string | undefined;
  /** How long a circuit stays open before one probe may go through. Defaults to 3000. */
  resetTimeoutInMs?: number;
  /**
   * A circuit opens when rebalancing failures exceed this share (%) of the attempts in its
   * window; a partition's circuit is made at its first rebalancing failure and counts from
   * there. Defaults to 50.
   */
  errorThresholdPercentage?: number;
  /** Fewest attempts in the window before a circuit may open. Defaults to 5. */
  volumeThreshold?: number;
  /**
   * A circuit also opens after this many rebalancing failures in a row, however many
   * successes its window holds from before (a busy partition whose circuit was already
   * there when it went offline).
   * Defaults to 5; `Infinity` to open on the percentage only.
   */
  consecutiveFailures?: number;
  /** The rolling window (10 buckets) over which failures are counted. Defaults to 3000. */
  rollingWindowInMs?: number;
  /** Most live circuits (about 7 KB each); the least recently used beyond it is evicted. Defaults to 5000. */
  maxScopes?: number;
  /** A circuit unused this long is evicted; `Infinity` for never. Defaults to 30000. */
  idleTtlInMs?: number;
}

/** The defaults of {@link PartitionBreakerOptions} (reasoning in docs/circuit-breaker.md). */
export const DEFAULT_PARTITION_BREAKER_OPTIONS = Object.freeze({
  mode: "wait" as PartitionBreakerMode,
  resetTimeoutInMs: 3_000,
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  consecutiveFailures: 5,
  rollingWindowInMs: 3_000,
  maxScopes: 5_000,
  idleTtlInMs: 30_000,
});

/** {@link PartitionBreakerOptions} validated, with defaults applied. */
export interface ResolvedPartitionBreakerOptions {
  mode: PartitionBreakerMode;
  service: StorageService | undefined;
  getScope: ((request: PipelineRequest) => string | undefined) | undefined;
  resetTimeoutInMs: number;
  errorThresholdPercentage: number;
  volumeThreshold: number;
  consecutiveFailures: number;
  rollingWindowInMs: number;
  maxScopes: number;
  idleTtlInMs: number;
}

const KNOWN_KEYS = [
  "mode",
  "service",
  "getScope",
  "resetTimeoutInMs",
  "errorThresholdPercentage",
  "volumeThreshold",
  "consecutiveFailures",
  "rollingWindowInMs",
  "maxScopes",
  "idleTtlInMs",
];
/** opossum splits the window into this many buckets. */
export const ROLLING_WINDOW_BUCKETS = 10;

/** Validates every option once, throwing a `TypeError`/`RangeError` that names it and the value. */
export function resolvePartitionBreakerOptions(options: PartitionBreakerOptions = {}): ResolvedPartitionBreakerOptions {
  validateObjectOption("circuitBreaker options", options);
  rejectUnknownKeys("circuitBreaker options", options, KNOWN_KEYS);
  const d = DEFAULT_PARTITION_BREAKER_OPTIONS;
  // `=== undefined`, not `??`: null is a mistake to name, not "the default".
  const mode = validateChoiceOption("mode", options.mode === undefined ? d.mode : options.mode, PARTITION_BREAKER_MODES);
  const service = options.service === undefined ? undefined : validateChoiceOption("service", options.service, STORAGE_SERVICES);
  if (options.getScope !== undefined && typeof options.getScope !== "function") {
    throw new TypeError("getScope must be a function (request) => string | undefined.");
  }
  const errorThresholdPercentage = optionalNumberOption(
    "errorThresholdPercentage",
    options.errorThresholdPercentage,
    d.errorThresholdPercentage,
    { min: 0, max: 100 },
  );
  if (errorThresholdPercentage === 100) {
    // opossum opens when the failure rate *exceeds* the threshold, so 100 could never open.
    throw new RangeError("errorThresholdPercentage must be below 100 (a circuit opens above it); got 100.");
  }
  return {
    mode,
    service,
    getScope: options.getScope,
    resetTimeoutInMs: optionalNumberOption("resetTimeoutInMs", options.resetTimeoutInMs, d.resetTimeoutInMs, {
      min: 1,
      max: DAY_IN_MS,
      integer: true,
    }),
    errorThresholdPercentage,
    volumeThreshold: optionalNumberOption("volumeThreshold", options.volumeThreshold, d.volumeThreshold, {
      max: 1_000_000,
      integer: true,
    }),
    consecutiveFailures: optionalNumberOption("consecutiveFailures", options.consecutiveFailures, d.consecutiveFailures, {
      min: 1,
      max: 1_000_000,
      integer: true,
      allowInfinity: true,
    }),
    rollingWindowInMs: optionalNumberOption("rollingWindowInMs", options.rollingWindowInMs, d.rollingWindowInMs, {
      min: ROLLING_WINDOW_BUCKETS,
      max: DAY_IN_MS,
      integer: true,
    }),
    maxScopes: optionalNumberOption("maxScopes", options.maxScopes, d.maxScopes, { min: 1, max: 10_000_000, integer: true }),
    idleTtlInMs: optionalNumberOption("idleTtlInMs", options.idleTtlInMs, d.idleTtlInMs, {
      min: 1,
      max: DAY_IN_MS,
      allowInfinity: true,
    }),
  };
}
