import type { PipelineRequest } from "@azure/core-rest-pipeline";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { choiceOption, isFunction, numberOption, optionsObject, optionWhere, type OptionsShape } from "../validation/optionSchema.js";

/**
 * Options of `createPartitionBreaker` and of `installResilience`'s `circuitBreaker`.
 * Every one is optional; docs/flow-control.md explains the model and each default.
 */
export interface PartitionBreakerOptions {
  /** The service the requests go to, for Azurite's path-style URLs. Defaults to detection from the host (`installResilience` passes its own). */
  service?: StorageService;
  /**
   * Your own scope key for a request (no secrets: it is logged and put in errors);
   * `undefined` lets the request bypass the breaker. Defaults to the partition scope
   * (account + table + PartitionKey, account + container + blob, account + queue).
   */
  getScope?: (request: PipelineRequest) => string | undefined;
  /**
   * How often a partition that serves nothing is probed, in milliseconds: how soon its return
   * is seen. An account that serves nothing is probed three times as often, since one answer
   * tells for all its partitions. Defaults to 300.
   */
  resetTimeoutInMs?: number;
  /**
   * Unserved answers in a row (503 ServerBusy, timeouts, resets, refused connections), nothing
   * served between, that make a partition (or an account, when they come from several of its
   * partitions) *out*: only probes go until one is served. Throttles also need a quarter second
   * with nothing served (a hot partition serves between its throttles). Defaults to 5;
   * `Infinity`: never out.
   */
  consecutiveFailures?: number;
  /**
   * Whether throttles teach a scope a send rate (a hot partition is sent what it serves). With
   * `false`, throttled attempts are only retried, and a scope is limited only while it serves
   * nothing. Defaults to true.
   */
  pacing?: boolean;
  /** Most scopes with state, partitions and accounts (a few hundred bytes each), at least 2; the least recently used beyond it is forgotten. Defaults to 5000. */
  maxScopes?: number;
  /** A scope unused this long is forgotten; `Infinity` for never. Defaults to 30000. */
  idleTtlInMs?: number;
}

/** The defaults of {@link PartitionBreakerOptions} (reasoning in docs/flow-control.md). */
export const DEFAULT_PARTITION_BREAKER_OPTIONS = Object.freeze({
  resetTimeoutInMs: 300,
  consecutiveFailures: 5,
  pacing: true,
  maxScopes: 5_000,
  idleTtlInMs: 30_000,
});

const d = DEFAULT_PARTITION_BREAKER_OPTIONS;
/** Validates every option once, throwing a `TypeError`/`RangeError` that names it by its path under `path` and the value. */
export const resolvePartitionBreakerOptions = optionsObject(
  {
    service: choiceOption(STORAGE_SERVICES),
    getScope: optionWhere<(request: PipelineRequest) => string | undefined>(isFunction, "a function (request) => string | undefined"),
    resetTimeoutInMs: numberOption({ min: 1, max: DAY_IN_MS, integer: true }, d.resetTimeoutInMs),
    consecutiveFailures: numberOption({ min: 1, max: 1_000_000, integer: true, allowInfinity: true }, d.consecutiveFailures),
    pacing: optionWhere<boolean>((value) => typeof value === "boolean", "true or false (its options were removed: one controller per scope learns the rate, docs/flow-control.md)", d.pacing),
    maxScopes: numberOption({ min: 2, max: 10_000_000, integer: true }, d.maxScopes),
    idleTtlInMs: numberOption({ min: 1, max: DAY_IN_MS, allowInfinity: true }, d.idleTtlInMs),
  } satisfies OptionsShape<PartitionBreakerOptions>,
  {
    root: "createPartitionBreaker options",
    removed: {
      mode:
        "was removed: whether an operation waits is declared for the caller now. Use caller: { failFast: true } " +
        'for "fail", caller: { concurrency: N } for a pool of N operations at a time (what "auto" guessed), and nothing for "wait" (the default).',
      rollingWindowInMs: "was removed: a scope with nothing left to limit is forgotten at the registry's next sweep (docs/flow-control.md).",
    },
  },
);
