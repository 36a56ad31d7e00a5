import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { validateClassificationRules, type ClassificationRules } from "../classification/classificationRules.js";
import { resolveBackoffByClass, type BackoffByClass } from "../backoff/backoffByClass.js";
import { createRetryStrategy, type RetryStrategyConfig } from "../backoff/createRetryStrategy.js";
import { exponentialBackoff } from "../backoff/exponentialBackoff.js";
import { resolveRandomSource, type RetryStrategy } from "../backoff/retryStrategy.js";
import { createAttemptDeadlines } from "../timing/attemptDeadlines.js";
import { createRetryBudget, resolveRetryBudgetOptions, type RetryBudget, type RetryBudgetOptions } from "../flow/retryBudget.js";
import { DAY_IN_MS } from "../timing/dayInMs.js";
import { describeValue } from "../validation/describeValue.js";
import {
  choiceOption,
  hasMethods,
  numberOption,
  optionsObject,
  optionWhere,
  type OptionCheck,
  type OptionsShape,
} from "../validation/optionSchema.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { EntityOperationNames } from "../address/entityOperationNames.js";
import type { AttemptGate } from "../breaker/attemptGate.js";
import type { PartitionBreaker } from "../breaker/partitionBreaker.js";
import type { RetryObserver } from "../observers/retryEvents.js";
import { readBackRoutesOf, type ReadBackRoutes } from "../ambiguousWrites/readBackRoutes.js";
import { resolveSecondaryReads } from "./secondaryReads.js";
import { resolveCallerOptions, type CallerOptions } from "./callerPolicy.js";

/** Options of {@link resilientRetryPolicy}. Every one is optional. */
export interface ResilientRetryPolicyOptions {
  /**
   * The backoff strategy, as an object or by name: every class's waits unless `backoff` gives
   * the class its own, and its `maxRetries` caps every operation's retries. Defaults to `exponentialBackoff()`.
   */
  retry?: RetryStrategy | RetryStrategyConfig;
  /**
   * A backoff per outcome class (`throttled`, `transient`, `timeout`), each a strategy or a
   * config by name; a class left out uses `retry`. A class's `maxRetries` (a config without
   * one takes `retry`'s, none may exceed it) caps the retries after that class's failures.
   * Defaults to none: every class uses `retry`.
   */
  backoff?: BackoffByClass;
  /**
   * Overall deadline for an operation, retries and waits included. `Infinity` for none.
   * It ends when the response headers arrive: a streamed body (a blob download) is not
   * bounded by it; bound it with `addAbortSignal(AbortSignal.timeout(ms), response.readableStreamBody)`
   * (docs/retry.md). At least 10. Defaults to 60000.
   */
  maxElapsedInMs?: number;
  /** Client-side timeout per attempt, up to its response headers; a timed-out attempt is classified `timeout` and retried. 0 for none, else at least 10. Defaults to 0. */
  tryTimeoutInMs?: number;
  /** Longest server-requested wait (`Retry-After` and friends) honoured. Defaults to the strategy's `maxDelayInMs`. */
  maxRetryAfterInMs?: number;
  /** Extends or overrides the classification table. */
  classification?: ClassificationRules;
  /** Hooks on every attempt, retry and operation end (metrics, logging, your own). */
  observers?: readonly RetryObserver[];
  /**
   * Decides when an attempt may go out: a breaker from `createPartitionBreaker()` (circuits
   * and pacing per partition). Defaults to none.
   */
  gate?: PartitionBreaker;
  /**
   * Who calls the client, which decides whether an operation may wait at a local refusal (an
   * open circuit, a paced queue, an empty retry budget): `{ concurrency: N }` for a bounded
   * caller of N operations at a time (a worker pool, a queue consumer), `{ failFast: true }`
   * never to wait (docs/flow-control.md). Defaults to an open-loop caller (each operation its
   * own caller, as in a web server), which waits within its deadline.
   */
  caller?: CallerOptions;
  /**
   * The service the client talks to, for reading Azurite's path-style URLs. Defaults to
   * detection from the host; `installResilience` passes its own.
   */
  service?: StorageService;
  /**
   * Settles Tables writes whose outcome is unknown by reading the entity back
   * (docs/data-safety.md): `true` or options to turn it on, `false` to leave it off.
   * `installResilience` turns it on for Tables, with its read-back policy. Defaults to false.
   */
  ambiguousWrites?:
    | boolean
    | {
        /** Longest time a read-back may take; it also ends at the operation's deadline. At least 10. Defaults to 10000. */
        readBackTimeoutInMs?: number;
        /**
         * The `ambiguousWriteReadBackPolicy()` added to the same pipeline: read-backs are sent
         * along the routes it remembers. For hand-built pipelines; `installResilience` makes its
         * own. Without it nothing is read back: a write whose outcome is unknown ends
         * `unresolved`, marked possibly applied. Defaults to none.
         */
        readBackPolicy?: PipelinePolicy;
      };
  /**
   * Limits retries to a fraction of requests (docs/data-safety.md): a budget from
   * `createRetryBudget()` (to share one between policies), its options, or `false` for none.
   * Defaults to a budget of its own with `DEFAULTS.retryBudget`.
   */
  retryBudget?: RetryBudget | RetryBudgetOptions | false;
  /**
   * Uniform random source in [0, 1] that spreads the polls of an empty retry budget over
   * [t, 2t] (the backoff strategies take a `random` of their own). Answers outside [0, 1] are clamped (NaN reads as 0.5).
   * Defaults to `Math.random`; tests pin it.
   */
  random?: () => number;
  /**
   * Reads (GET, HEAD) of an RA-GRS / RA-GZRS account go to the secondary region while the
   * primary's partition is refused by an open circuit, or after a read failed there as a
   * partition being moved fails (docs/secondary-reads.md). The secondary lags the primary: what
   * it answers may be stale. Writes never go there. `true` derives it from the request's URL
   * (`-secondary` appended to the account name, in the host or in a path-style URL's first
   * segment); `{ endpoint }` names it: an http(s) URL without query or fragment, e.g.
   * `https://myacct-secondary.blob.core.windows.net`. Defaults to false.
   */
  secondaryReads?: boolean | { endpoint?: string };
}

/** Options of ambiguous-write resolution (documented on the option). */
export type AmbiguousWriteOptions = Exclude<ResilientRetryPolicyOptions["ambiguousWrites"], boolean | undefined>;

/** The shortest timeout or deadline: no Azure round trip fits in less (a new connection's TCP and TLS alone take longer), so a smaller one is in seconds. */
const MIN_TIMEOUT_IN_MS = 10;

/** Defaults of {@link AmbiguousWriteOptions}. */
export const DEFAULT_AMBIGUOUS_WRITE_OPTIONS = Object.freeze({
  readBackTimeoutInMs: 10_000,
});

/** `readBackPolicy`: the routes of the read-back policy given, undefined when none is. */
function readBackRoutesOption(value: unknown, path: string): ReadBackRoutes | undefined {
  if (value === undefined) return undefined;
  const routes = readBackRoutesOf(value);
  if (routes === undefined) throw new TypeError(`${path} must be the policy ambiguousWriteReadBackPolicy() returns; got ${describeValue(value)}.`);
  return routes;
}

const checkAmbiguousWriteOptions = optionsObject(
  {
    readBackTimeoutInMs: numberOption({ min: MIN_TIMEOUT_IN_MS, max: DAY_IN_MS }, DEFAULT_AMBIGUOUS_WRITE_OPTIONS.readBackTimeoutInMs),
    // Checked as the policy, read as its routes (what the read-back needs). null is not "none":
    // like every other option, it is a mistake worth naming.
    readBackPolicy: readBackRoutesOption,
  } satisfies OptionsShape<AmbiguousWriteOptions>,
  {
    expected: "a boolean or an options object",
    removed: { readBackRoutes: "was removed: give readBackPolicy the ambiguousWriteReadBackPolicy() of the same pipeline." },
  },
);

/** `ambiguousWrites` after validation: what the retry loop reads. */
export type AmbiguousWriteSettings = ReturnType<typeof checkAmbiguousWriteOptions>;

/** Defaults of {@link resilientRetryPolicy} beyond the strategy's own. */
export const DEFAULT_RETRY_POLICY_OPTIONS = Object.freeze({
  maxElapsedInMs: 60_000,
  tryTimeoutInMs: 0,
});

/** `observers`: an array of objects. Exported for installResilience, which checks them before adding its own. */
export const checkObservers: OptionCheck<readonly RetryObserver[]> = (value, path) => {
  if (value === undefined) return [];
  // null is not "none": like every other option, it is a mistake worth naming.
  if (!Array.isArray(value)) throw new TypeError(`${path} must be an array of RetryObserver objects.`);
  for (const [index, observer] of value.entries()) {
    if (typeof observer !== "object" || observer === null) {
      throw new TypeError(`${path}[${index}] must be a RetryObserver object; got ${describeValue(observer)}.`);
    }
  }
  return value;
};

const d = DEFAULT_RETRY_POLICY_OPTIONS;
const checkPolicyOptions = optionsObject(
  {
    retry: (value, path) => (value === undefined ? exponentialBackoff() : createRetryStrategy(value as RetryStrategyConfig, path)),
    // Checked against `retry` once it is known (a class may not retry more than it): see resolveRetryPolicyOptions.
    backoff: (value) => value,
    maxElapsedInMs: numberOption({ min: MIN_TIMEOUT_IN_MS, max: DAY_IN_MS, allowInfinity: true }, d.maxElapsedInMs),
    tryTimeoutInMs: numberOption({ min: MIN_TIMEOUT_IN_MS, max: DAY_IN_MS, allowZero: true }, d.tryTimeoutInMs),
    // Defaults to the strategy's longest wait: see resolveRetryPolicyOptions.
    maxRetryAfterInMs: numberOption({ max: DAY_IN_MS }),
    classification: (value, path) => (value === undefined ? undefined : validateClassificationRules(value, path)),
    observers: checkObservers,
    // Any object with the gate contract's methods is taken (tests script their own); users pass a breaker.
    gate: optionWhere<AttemptGate>(hasMethods("admit", "record"), "a breaker from createPartitionBreaker()"),
    ambiguousWrites: resolveAmbiguousWrites,
    retryBudget: resolveBudget,
    random: (value, path) => resolveRandomSource(path, value),
    service: choiceOption(STORAGE_SERVICES),
    secondaryReads: resolveSecondaryReads,
    caller: resolveCallerOptions,
  } satisfies OptionsShape<ResilientRetryPolicyOptions>,
  { root: "resilientRetryPolicy options", owner: "resilientRetryPolicy" },
);

/** Options after validation, with every default applied: what the retry loop reads. */
export type RetryPolicySettings = ReturnType<typeof resolveRetryPolicyOptions>;

/** Validates the options once, when the policy is made; errors name the option and the value. */
export function resolveRetryPolicyOptions(options: ResilientRetryPolicyOptions) {
  const o = checkPolicyOptions(options, "");
  return {
    strategy: o.retry,
    /** The strategy for each retriable class (`strategy` for those without their own). */
    backoff: resolveBackoffByClass(o.retry, o.backoff),
    maxElapsedInMs: o.maxElapsedInMs,
    tryTimeoutInMs: o.tryTimeoutInMs,
    maxRetryAfterInMs: o.maxRetryAfterInMs ?? o.retry.maxDelayInMs,
    rules: o.classification,
    observers: o.observers,
    gate: o.gate,
    caller: o.caller,
    service: o.service,
    ambiguousWrites: o.ambiguousWrites,
    budget: o.retryBudget,
    random: o.random,
    /** Where reads may go when the primary's partition cannot serve them; undefined when off. */
    secondaryReads: o.secondaryReads,
    /** The policy's per-attempt timeouts, on one timer. */
    deadlines: createAttemptDeadlines(),
    /** What the policy learns about naming its Tables client's entity addresses (a point read's URL is then not read again for it). */
    entityOperationNames: o.service === "table" ? new EntityOperationNames() : undefined,
  };
}

/** `ambiguousWrites`: undefined and false turn it off; true and an options object turn it on. */
export function resolveAmbiguousWrites(option: unknown, name = "ambiguousWrites"): AmbiguousWriteSettings | undefined {
  if (option === undefined || option === false) return undefined;
  return checkAmbiguousWriteOptions(option === true ? {} : option, name);
}

/** `retryBudget`: false for none, a budget object as is, options (or undefined) for a new one. */
function resolveBudget(option: unknown, path: string): RetryBudget | undefined {
  if (option === false) return undefined;
  if (option === undefined) return createRetryBudget();
  if (hasMethods("recordRequest", "tryRetry", "retryAfterInMs")(option)) return option as RetryBudget;
  return createRetryBudget(resolveRetryBudgetOptions(option, path) as RetryBudgetOptions);
}
