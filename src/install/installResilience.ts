import type { Pipeline, PipelinePolicy } from "@azure/core-rest-pipeline";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { BackoffByClass } from "../backoff/backoffByClass.js";
import type { RetryStrategyConfig } from "../backoff/createRetryStrategy.js";
import type { RetryStrategy } from "../backoff/retryStrategy.js";
import type { ExponentialBackoffOptions } from "../backoff/exponentialBackoff.js";
import type { PartitionBreaker } from "../breaker/partitionBreaker.js";
import { HEALTHY_PARTITION, type PartitionStatus } from "../breaker/partitionBreakerInterface.js";
import type { MetricsObserver, MetricsOptions } from "../metrics/metricsObserver.js";
import type { OpenTelemetryMetricsOptions } from "../metrics/openTelemetryObserver.js";
import type { PartitionBreakerOptions } from "../breaker/partitionBreakerOptions.js";
import type { RetryBudget, RetryBudgetOptions } from "../flow/retryBudget.js";
import { ambiguousWriteReadBackPolicy, ambiguousWriteReadBackPolicyName } from "../ambiguousWrites/ambiguousWriteReadBack.js";
import { createRetryPolicyWithCaller, resilientRetryPolicyName } from "../policies/resilientRetryPolicy.js";
import { checkObservers, type ResilientRetryPolicyOptions } from "../policies/retryPolicyOptions.js";
import type { RetryObserver } from "../observers/retryEvents.js";
import type { CallerOptions } from "../policies/callerPolicy.js";
import { SERVICE_PRESETS } from "./servicePresets.js";
import { createRetryLogObserver } from "../observers/retryLogObserver.js";
import { describeValue } from "../validation/describeValue.js";
import { optionsObject, type OptionsShape } from "../validation/optionSchema.js";
import { findPipeline } from "./findPipeline.js";
import type { TracingOptions } from "../tracing/tracingOptions.js";
import { resendCountPolicyName, SDK_TRACING_POLICY_NAME } from "../tracing/resendCountPolicy.js";
import { scopeKey, type StorageService } from "../address/partitionScope.js";
import {
  accountOf,
  createCircuitBreaker,
  createMetrics,
  createTracing,
  isPartitionBreaker,
  resolveBackoff,
  resolveInstallAmbiguousWrites,
  resolveInstallSecondaryReads,
  resolveRetry,
  resolveService,
} from "./installOptions.js";

/** Options of {@link installResilience}. Every one is optional; defaults come from the service's preset. */
export interface InstallResilienceOptions {
  /**
   * The service behind the client. Detected from the endpoint or client class when omitted;
   * when given, it must match what they tell (a TypeError names both otherwise).
   */
  service?: StorageService;
  /**
   * The backoff strategy: an object (`exponentialBackoff(...)`), a config by name, or some of
   * the preset's numbers alone (`{ maxRetries: 4 }`: the preset's exponential backoff with
   * them). Numbers missing from an `"exponential"` config, or from one without `strategy`,
   * come from the service preset.
   */
  retry?: RetryStrategy | RetryStrategyConfig | (ExponentialBackoffOptions & { strategy?: undefined });
  /**
   * A backoff per outcome class (`throttled`, `transient`, `timeout`), replacing the preset's:
   * a class left out uses `retry`, so `{}` gives every class `retry`'s waits. Numbers missing
   * from an `"exponential"` config come from the preset's for that class. Preset default:
   * `transient` first retries within tens of milliseconds, `throttled` and `timeout` use
   * `retry` (docs/retry.md); it applies while `retry` is the preset's
   * (omitted, or an `"exponential"` config), not with a strategy of your own.
   */
  backoff?: BackoffByClass;
  /**
   * Overall deadline per operation, retries included; `Infinity` for none. It ends when the
   * response headers arrive: a streamed body (a blob download) is not bounded by it; bound
   * it with `addAbortSignal(AbortSignal.timeout(ms), response.readableStreamBody)` (docs/retry.md).
   * At least 10. Preset default: 60000 (table, queue), 300000 (blob).
   */
  maxElapsedInMs?: number;
  /** Client-side timeout per attempt up to its response headers, classified `timeout` and retried; 0 for none, else at least 10. Preset default: 30000 (table, queue), 0 (blob). */
  tryTimeoutInMs?: number;
  /** Longest `Retry-After` honoured. Defaults to the strategy's maximum delay. */
  maxRetryAfterInMs?: number;
  /** Extends or overrides the classification table. */
  classification?: ClassificationRules;
  /** Your own hooks on attempts, retries and operation ends. */
  observers?: readonly RetryObserver[];
  /**
   * The per-partition circuit breaker (docs/circuit-breaker.md): its options, `false` to turn
   * it off, or a breaker from `createPartitionBreaker()` to share with other clients, so that
   * what one client learns about a partition (its circuit, its pacing) serves them all (clients
   * made per request, Functions). A shared breaker is its owner's: `dispose()` leaves it running.
   * Defaults to a breaker of the client's own, with `DEFAULTS.partitionBreaker` and the service above.
   */
  circuitBreaker?: PartitionBreakerOptions | PartitionBreaker | false;
  /**
   * Metrics (docs/metrics.md): Prometheus options, OpenTelemetry options (`{ meter }` or
   * `{ sink: "opentelemetry" }`), or `false` to turn them off. Defaults to Prometheus on
   * prom-client's default registry when prom-client is installed (it is an optional peer),
   * and to none, with a warning logged once, when it is not. Never calls `collectDefaultMetrics`.
   */
  metrics?: MetricsOptions | OpenTelemetryMetricsOptions | false;
  /**
   * Settling Tables writes whose outcome is unknown by reading the entity back
   * (docs/data-safety.md): `false` turns it off. Defaults to on for Tables; other services
   * do not support it. The install makes the read-back routes itself, one per install.
   */
  ambiguousWrites?: boolean | { /** Longest time a read-back may take; it also ends at the operation's deadline. At least 10. Defaults to 10000. */ readBackTimeoutInMs?: number };
  /**
   * The client's retry budget (docs/data-safety.md): its options, a shared
   * `createRetryBudget()`, or `false` for none. Defaults to 50 % of requests plus 10 retries
   * per second over 10 s (`DEFAULTS.retryBudget`).
   */
  retryBudget?: RetryBudgetOptions | RetryBudget | false;
  /**
   * Reads from the secondary region of an RA-GRS / RA-GZRS account (docs/secondary-reads.md): a
   * GET or HEAD whose partition's circuit is open, or whose primary attempt failed as a partition
   * being moved fails, goes there before the next retry; writes never do. `true` derives it from
   * the client's endpoint (`-secondary` appended to the account name); `{ endpoint }` names it.
   * It lags the primary (no SLA): a read there may be stale, and its 404 is not trusted. Defaults to false.
   */
  secondaryReads?: ResilientRetryPolicyOptions["secondaryReads"];
  /**
   * Who calls the client (docs/flow-control.md), which decides whether an operation waits at
   * a local refusal (an open circuit, a paced queue, an empty retry budget):
   * `{ concurrency: N }` for a bounded caller of N operations at a time (a worker pool, a queue
   * consumer: its waiters may use only its spare slots, and the next one fails at once with
   * `retryAfterInMs`), `{ failFast: true }` never to wait. Defaults to an open-loop caller
   * (each operation its own caller, as in a web server), which waits within its deadline.
   */
  caller?: CallerOptions;
  /**
   * Span events on the span of each SDK call the policy had to retry or hold (docs/tracing.md):
   * every attempt's outcome, every wait with its reason and its planned and actual length, a
   * local refusal, an ambiguous write's settling; and `http.request.resend_count` on resent
   * attempts' spans. Needs `@opentelemetry/api` and the Azure SDK's OpenTelemetry
   * instrumentation; without them nothing is written. A call that succeeds at its first
   * attempt costs no span lookup. Options, or `false` to turn it off. Defaults to on, without
   * the partition (`partitionAttribute`).
   */
  tracing?: Omit<TracingOptions, "circuitBreaker"> | false;
}

/** What {@link installResilience} returns. */
export interface ResilienceHandle {
  /** The service the policies were configured for. */
  readonly service: StorageService;
  /** The retry policy now in the pipeline's Retry phase. */
  readonly retryPolicy: PipelinePolicy;
  /** The SDK retry policies that were removed (put back by `dispose`). */
  readonly removedPolicies: readonly PipelinePolicy[];
  /** The per-partition circuit breaker (open scopes, state counts, transitions); undefined when turned off. */
  readonly circuitBreaker: PartitionBreaker | undefined;
  /** The observer recording this client's metrics; undefined when turned off. */
  readonly metrics: MetricsObserver | undefined;
  /**
   * Whether a partition of this client takes attempts now, and when to come back, without
   * sending anything: `resource` is the table, container or queue; `partition` the
   * PartitionKey (Tables) or blob name. Healthy when the breaker is off or the client's
   * account cannot be read from its URL. Cheap and synchronous: ask it before dispatching.
   */
  partitionStatus(resource: string, partition?: string): PartitionStatus;
  /**
   * Runs one unit of a bounded caller's work (a message, a job: `caller: { concurrency: N }`)
   * and counts it as one of the N slots for as long as it runs, the time spent outside this
   * client included (docs/flow-control.md). Without it only the client's own operations are
   * counted, and a worker busy elsewhere looks like a spare slot to wait in. Resolves or
   * rejects as `unit` does; for other callers it only runs `unit`.
   */
  work<T>(unit: () => Promise<T>): Promise<T>;
  /** Removes the package's policies, restores the SDK's retry policies and stops every timer. Idempotent. */
  dispose(): void;
}

/** Names of retry policies the Azure SDK packages add; removed wherever they sit, so retries never nest. */
export const SDK_RETRY_POLICY_NAMES: readonly string[] = [
  "defaultRetryPolicy",
  "retryPolicy",
  "exponentialRetryPolicy",
  "systemErrorRetryPolicy",
  "throttlingRetryPolicy",
  "storageRetryPolicy",
];

/** Checked where it is used: against the service, or by the retry policy. */
const later = (value: unknown): unknown => value;
const checkOptions = optionsObject(
  {
    service: later,
    retry: later,
    backoff: later,
    maxElapsedInMs: later,
    tryTimeoutInMs: later,
    maxRetryAfterInMs: later,
    classification: later,
    observers: checkObservers,
    circuitBreaker: later,
    metrics: later,
    ambiguousWrites: later,
    retryBudget: later,
    secondaryReads: later,
    caller: later,
    tracing: later,
  } satisfies OptionsShape<InstallResilienceOptions>,
  { root: "installResilience options", owner: "installResilience" },
);
const installed = new WeakMap<Pipeline, ResilienceHandle>();

/**
 * Makes an Azure Storage client resilient: removes the SDK's own retry policies and puts
 * the package's retry policy in the Retry phase of the client's pipeline. Installing on
 * the same pipeline again replaces the previous installation.
 *
 * @example
 * const handle = installResilience(tableClient);
 * // ... on shutdown:
 * handle.dispose();
 */
export function installResilience(target: unknown, options: InstallResilienceOptions = {}): ResilienceHandle {
  // Observers are checked here, before the retry log observer goes first: an error must give the index the caller wrote.
  const { observers } = checkOptions(options, "");
  const pipeline = findPipeline(target);
  const service = resolveService(target, options.service);
  const preset = SERVICE_PRESETS[service];
  const circuitBreaker = createCircuitBreaker(options.circuitBreaker, service);
  // A breaker passed in is shared with other clients: its owner disposes it, not this handle.
  const sharedBreaker = isPartitionBreaker(options.circuitBreaker);
  const ambiguousWrites = resolveInstallAmbiguousWrites(options.ambiguousWrites, service);
  const readBackPolicy = ambiguousWrites && ambiguousWriteReadBackPolicy();
  const secondaryReads = resolveInstallSecondaryReads(target, options.secondaryReads);
  // One observer per sink, chosen here once: it records every metric, the secondary reads' only when they are on.
  const metrics = createMetrics(options.metrics, service, secondaryReads !== undefined);
  const tracing = createTracing(options.tracing, circuitBreaker);
  const { policy: retryPolicy, caller } = createRetryPolicyWithCaller({
    retry: resolveRetry(options.retry, preset.retry),
    backoff: resolveBackoff(options.backoff, options.retry, preset),
    // `=== undefined`, not `??`: a null must reach the policy's validation and be named there.
    maxElapsedInMs: options.maxElapsedInMs === undefined ? preset.maxElapsedInMs : options.maxElapsedInMs,
    tryTimeoutInMs: options.tryTimeoutInMs === undefined ? preset.tryTimeoutInMs : options.tryTimeoutInMs,
    maxRetryAfterInMs: options.maxRetryAfterInMs,
    classification: options.classification,
    observers: [
      createRetryLogObserver({ service }),
      ...observers,
      ...(metrics === undefined ? [] : [metrics]),
      ...(tracing === undefined ? [] : [tracing.observer]),
    ],
    gate: circuitBreaker,
    service,
    // One route store per install, given to both policies: a read-back goes only through its own client's pipeline.
    ambiguousWrites: ambiguousWrites && { readBackTimeoutInMs: ambiguousWrites.readBackTimeoutInMs, readBackPolicy },
    retryBudget: options.retryBudget,
    secondaryReads,
    caller: options.caller,
  });
  // Subscribed only once nothing else can throw, so a failed install leaves no gauge source behind.
  if (metrics && circuitBreaker) metrics.observeCircuits(circuitBreaker);

  installed.get(pipeline)?.dispose();
  const removedPolicies = removeRetryPolicies(pipeline);
  pipeline.addPolicy(retryPolicy, { phase: "Retry" });
  // After the SDK's tracingPolicy, which makes each attempt's span the active one for the policies after it.
  if (tracing !== undefined) pipeline.addPolicy(tracing.resendCount, { afterPhase: "Retry", afterPolicies: [SDK_TRACING_POLICY_NAME] });
  // Before the credential policy, so read-backs are signed by the client's own pipeline (docs/data-safety.md).
  if (readBackPolicy) pipeline.addPolicy(readBackPolicy, { phase: "Serialize" });

  let disposed = false;
  const account = accountOf(target, service);
  const handle: ResilienceHandle = {
    service,
    retryPolicy,
    removedPolicies,
    circuitBreaker,
    metrics,
    work<T>(unit: () => Promise<T>): Promise<T> {
      if (typeof unit !== "function") throw new TypeError(`work: unit must be a function returning a promise; got ${describeValue(unit)}.`);
      return caller.track(unit);
    },
    partitionStatus(resource: string, partition?: string): PartitionStatus {
      if (typeof resource !== "string") throw new TypeError(`partitionStatus: resource must be a string; got ${typeof resource}.`);
      if (partition !== undefined && typeof partition !== "string") throw new TypeError(`partitionStatus: partition must be a string; got ${typeof partition}.`);
      if (circuitBreaker === undefined || account === undefined) return HEALTHY_PARTITION;
      return circuitBreaker.statusOf(scopeKey({ service, account, resource, partition }));
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      pipeline.removePolicy({ name: resilientRetryPolicyName });
      pipeline.removePolicy({ name: ambiguousWriteReadBackPolicyName });
      pipeline.removePolicy({ name: resendCountPolicyName });
      if (!sharedBreaker) circuitBreaker?.dispose();
      metrics?.dispose();
      for (const policy of removedPolicies) pipeline.addPolicy(policy, { phase: "Retry" });
      if (installed.get(pipeline) === handle) installed.delete(pipeline);
    },
  };
  installed.set(pipeline, handle);
  return handle;
}

/** Removes the whole Retry phase and any SDK retry policy placed elsewhere. */
function removeRetryPolicies(pipeline: Pipeline): PipelinePolicy[] {
  const removed = pipeline.removePolicy({ phase: "Retry" });
  for (const name of SDK_RETRY_POLICY_NAMES) removed.push(...pipeline.removePolicy({ name }));
  return removed;
}
