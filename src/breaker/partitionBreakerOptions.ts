import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { resolvePacingOptions, type PacingOptions, type ResolvedPacingOptions } from "../flow/pacingOptions.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { optionalNumberOption } from "../validation/validateNumberOption.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";
import { describeValue } from "../validation/describeValue.js";
import { optionPath } from "../validation/optionPath.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";

/**
 * Options of `createPartitionBreaker` and of `installResilience`'s `circuitBreaker`.
 * Every one is optional; docs/circuit-breaker.md explains each default.
 */
export interface PartitionBreakerOptions {
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
  /**
   * How long a circuit stays open before one probe may go through: how soon a partition's return is
   * noticed (a successful probe wakes every attempt waiting on it at once). Defaults to 300.
   */
  resetTimeoutInMs?: number;
  /**
   * A circuit opens after this many rebalancing failures in a row (503 ServerBusy,
   * timeouts, resets) with no success for a quarter second: a partition that serves
   * nothing. A hot partition, which keeps serving between its throttled answers, never
   * opens it; pacing serves it instead. Defaults to 5; `Infinity` for circuits never to open.
   */
  consecutiveFailures?: number;
  /** A scope whose circuit is closed and that had no failure for this long is forgotten. Defaults to 3000. */
  rollingWindowInMs?: number;
  /**
   * Pacing of throttled partitions (docs/flow-control.md): options, or `false` to turn it
   * off (throttled answers are then only retried). Defaults to `DEFAULT_PACING_OPTIONS`.
   */
  pacing?: PacingOptions | false;
  /** Most scopes with state (a few hundred bytes each); the least recently used beyond it is forgotten. Defaults to 5000. */
  maxScopes?: number;
  /** A circuit unused this long is evicted; `Infinity` for never. Defaults to 30000. */
  idleTtlInMs?: number;
}

/** The defaults of {@link PartitionBreakerOptions} (reasoning in docs/circuit-breaker.md). */
export const DEFAULT_PARTITION_BREAKER_OPTIONS = Object.freeze({
  resetTimeoutInMs: 300,
  consecutiveFailures: 5,
  rollingWindowInMs: 3_000,
  maxScopes: 5_000,
  idleTtlInMs: 30_000,
});

/** {@link PartitionBreakerOptions} validated, with defaults applied. */
export interface ResolvedPartitionBreakerOptions {
  service: StorageService | undefined;
  getScope: ((request: PipelineRequest) => string | undefined) | undefined;
  resetTimeoutInMs: number;
  consecutiveFailures: number;
  rollingWindowInMs: number;
  pacing: ResolvedPacingOptions | undefined;
  maxScopes: number;
  idleTtlInMs: number;
}

const KNOWN_KEYS = [
  "service",
  "getScope",
  "resetTimeoutInMs",
  "consecutiveFailures",
  "rollingWindowInMs",
  "pacing",
  "maxScopes",
  "idleTtlInMs",
];
/** Validates every option once, throwing a `TypeError`/`RangeError` that names it and the value. */
export function resolvePartitionBreakerOptions(options: PartitionBreakerOptions = {}, path = ""): ResolvedPartitionBreakerOptions {
  const at = (key: string) => optionPath(path, key);
  validateObjectOption(path || "createPartitionBreaker options", options);
  if ("mode" in options) {
    throw new TypeError(
      `${at("mode")} was removed: whether an operation waits is declared for the caller now. Use caller: { failFast: true } ` +
        'for "fail", caller: { concurrency: N } for a pool of N operations at a time (what "auto" guessed), and nothing for "wait" (the default).',
    );
  }
  rejectUnknownKeys(path, options, KNOWN_KEYS);
  const d = DEFAULT_PARTITION_BREAKER_OPTIONS;
  // `=== undefined`, not `??`: null is a mistake to name, not "the default".
  const service = options.service === undefined ? undefined : validateChoiceOption(at("service"), options.service, STORAGE_SERVICES);
  if (options.getScope !== undefined && typeof options.getScope !== "function") {
    throw new TypeError(`${at("getScope")} must be a function (request) => string | undefined; got ${describeValue(options.getScope)}.`);
  }
  return {
    service,
    getScope: options.getScope,
    resetTimeoutInMs: optionalNumberOption(at("resetTimeoutInMs"), options.resetTimeoutInMs, d.resetTimeoutInMs, {
      min: 1,
      max: DAY_IN_MS,
      integer: true,
    }),
    consecutiveFailures: optionalNumberOption(at("consecutiveFailures"), options.consecutiveFailures, d.consecutiveFailures, {
      min: 1,
      max: 1_000_000,
      integer: true,
      allowInfinity: true,
    }),
    rollingWindowInMs: optionalNumberOption(at("rollingWindowInMs"), options.rollingWindowInMs, d.rollingWindowInMs, {
      min: 1,
      max: DAY_IN_MS,
      integer: true,
    }),
    pacing: resolvePacingOptions(options.pacing, at("pacing")),
    maxScopes: optionalNumberOption(at("maxScopes"), options.maxScopes, d.maxScopes, { min: 1, max: 10_000_000, integer: true }),
    idleTtlInMs: optionalNumberOption(at("idleTtlInMs"), options.idleTtlInMs, d.idleTtlInMs, {
      min: 1,
      max: DAY_IN_MS,
      allowInfinity: true,
    }),
  };
}
