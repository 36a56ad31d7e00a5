// installResilience: options, wiring of every policy and observer on a client, and the handle.
// Over 250 lines: the options interface and its doc comments are half of it.
import type { Pipeline, PipelinePolicy } from "@azure/core-rest-pipeline";
import type { ClassificationRules } from "../classification/classificationRules.js";
import type { BackoffByClass } from "../backoff/backoffByClass.js";
import { RETRIABLE_CLASSES } from "../classification/outcomeClass.js";
import { createRetryStrategy, isRetryStrategy, type RetryStrategyConfig } from "../backoff/createRetryStrategy.js";
import type { RetryStrategy } from "../backoff/retryStrategy.js";
import type { ExponentialBackoffOptions } from "../backoff/exponentialBackoff.js";
import { createPipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import { createPartitionBreakerAt, type PartitionBreaker } from "../breaker/partitionBreaker.js";
import { HEALTHY_PARTITION, type PartitionStatus } from "../breaker/partitionStatus.js";
import { scopeKey } from "../address/scopeKey.js";
import { createPrometheusObserver, type MetricsObserver } from "../metrics/metricsObserver.js";
import type { MetricsOptions } from "../metrics/metricsOptions.js";
import { createOpenTelemetryMetricsObserverAt } from "../metrics/openTelemetryObserver.js";
import { choosesOpenTelemetry, type OpenTelemetryMetricsOptions } from "../metrics/openTelemetryOptions.js";
import { isPeerInstalled } from "../metrics/optionalPeer.js";
import { logger } from "../logging/logger.js";
import type { PartitionBreakerOptions } from "../breaker/partitionBreakerOptions.js";
import type { RetryBudget, RetryBudgetOptions } from "../flow/retryBudget.js";
import { ambiguousWriteReadBackPolicy, ambiguousWriteReadBackPolicyName } from "../ambiguousWrites/ambiguousWriteReadBack.js";
import { createRetryPolicyWithCaller, resilientRetryPolicyName } from "../policies/resilientRetryPolicy.js";
import { resolveAmbiguousWrites, type ResilientRetryPolicyOptions } from "../policies/retryPolicyOptions.js";
import { createReadBackRoutes } from "../ambiguousWrites/readBackRoutes.js";
import { resolveSecondaryReads, type SecondaryReadOptions } from "../policies/secondaryReads.js";
import type { RetryObserver } from "../observers/retryEvents.js";
import type { CallerOptions } from "../policies/callerPolicy.js";
import { SERVICE_PRESETS } from "./servicePresets.js";
import { createRetryLogObserver } from "../observers/retryLogObserver.js";
import { describeValue } from "../validation/describeValue.js";
import { rejectUnknownKeys } from "../validation/rejectUnknownKeys.js";
import { validateChoiceOption } from "../validation/validateChoiceOption.js";
import { validateObjectOption } from "../validation/validateObjectOption.js";
import { detectService } from "./detectService.js";
import { findPipeline } from "./findPipeline.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import { linkTableResults } from "./tableResultInfo.js";

/**
 * Numbers of the service preset's exponential backoff to change, without naming a strategy:
 * `retry: { maxRetries: 4 }` is the preset's backoff with 4 retries.
 */
export type PresetRetryOptions = ExponentialBackoffOptions & { strategy?: undefined };

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
   * Preset default: 60000 (table, queue), 300000 (blob).
   */
  maxElapsedInMs?: number;
  /** Client-side timeout per attempt up to its response headers, classified `timeout` and retried; 0 for none. Preset default: 30000 (table, queue), 0 (blob). */
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
  ambiguousWrites?: boolean | { /** Longest time a read-back may take; it also ends at the operation's deadline. Defaults to 10000. */ readBackTimeoutInMs?: number };
  /**
   * The client's retry budget (docs/data-safety.md): its options, a shared
   * `createRetryBudget()`, or `false` for none. Defaults to 50 % of requests plus 10 retries
   * per second over 10 s (`DEFAULTS.retryBudget`).
   */
  retryBudget?: RetryBudgetOptions | RetryBudget | false;
  /**
   * Reads from the secondary region of an RA-GRS / RA-GZRS account (docs/secondary-reads.md):
   * a GET or HEAD whose partition's circuit is open, or whose attempt on the primary failed
   * as a partition being moved fails (throttled, timeout, transient), is sent to the
   * secondary before the next retry; writes never are. `true` derives the secondary from the
   * client's endpoint (`-secondary` appended to the account name); `{ endpoint }` names it.
   * The secondary lags the primary (typically under 15 minutes, with no SLA): a read there
   * may be stale, and its 404 is not trusted. Defaults to false.
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

const KNOWN_KEYS = [
  "service",
  "retry",
  "backoff",
  "maxElapsedInMs",
  "tryTimeoutInMs",
  "maxRetryAfterInMs",
  "classification",
  "observers",
  "circuitBreaker",
  "metrics",
  "ambiguousWrites",
  "retryBudget",
  "secondaryReads",
  "caller",
];
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
  validateObjectOption("installResilience options", options);
  rejectUnknownKeys("", options, KNOWN_KEYS, "installResilience");
  const pipeline = findPipeline(target);
  const service = resolveService(target, options.service);
  const preset = SERVICE_PRESETS[service];
  const circuitBreaker = createCircuitBreaker(options.circuitBreaker, service);
  // A breaker passed in is shared with other clients: its owner disposes it, not this handle.
  const sharedBreaker = isPartitionBreaker(options.circuitBreaker);
  const ambiguousWrites = resolveInstallAmbiguousWrites(options.ambiguousWrites, service);
  const readBackRoutes = ambiguousWrites && createReadBackRoutes();
  const secondaryReads = resolveInstallSecondaryReads(target, options.secondaryReads);
  // One observer per sink, chosen here once: it records every metric, the secondary reads' only when they are on.
  const metrics = createMetrics(options.metrics, service, secondaryReads !== undefined);
  const { policy: retryPolicy, caller } = createRetryPolicyWithCaller({
    retry: resolveRetry(options.retry, preset.retry),
    backoff: resolveBackoff(options.backoff, options.retry, preset),
    // `=== undefined`, not `??`: a null must reach the policy's validation and be named there.
    maxElapsedInMs: options.maxElapsedInMs === undefined ? preset.maxElapsedInMs : options.maxElapsedInMs,
    tryTimeoutInMs: options.tryTimeoutInMs === undefined ? preset.tryTimeoutInMs : options.tryTimeoutInMs,
    maxRetryAfterInMs: options.maxRetryAfterInMs,
    classification: options.classification,
    observers: withPackageObservers(options.observers, metrics, service),
    gate: circuitBreaker,
    service,
    // One route store per install, given to both policies: a read-back goes only through its own client's pipeline.
    ambiguousWrites: ambiguousWrites && { readBackTimeoutInMs: ambiguousWrites.readBackTimeoutInMs, readBackRoutes },
    retryBudget: options.retryBudget,
    secondaryReads,
    caller: options.caller,
  });
  // Subscribed only once nothing else can throw, so a failed install leaves no gauge source behind.
  if (metrics && circuitBreaker) metrics.observeCircuits(circuitBreaker);

  installed.get(pipeline)?.dispose();
  const removedPolicies = removeRetryPolicies(pipeline);
  pipeline.addPolicy(retryPolicy, { phase: "Retry" });
  // Before the credential policy, so read-backs are signed by the client's own pipeline (docs/data-safety.md).
  if (readBackRoutes) pipeline.addPolicy(ambiguousWriteReadBackPolicy(readBackRoutes), { phase: "Serialize" });
  // A Tables result keeps no link to its request: the client's methods mark it for getRetryInfo.
  const unlinkResults = service === "table" ? linkTableResults(target, pipeline) : undefined;

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
      unlinkResults?.();
      if (!sharedBreaker) circuitBreaker?.dispose();
      metrics?.dispose();
      for (const policy of removedPolicies) pipeline.addPolicy(policy, { phase: "Retry" });
      if (installed.get(pipeline) === handle) installed.delete(pipeline);
    },
  };
  installed.set(pipeline, handle);
  return handle;
}

/** The user's observers, preceded by the retry log and followed by metrics; a non-array is passed on for the policy to reject. */
function withPackageObservers(
  observers: readonly RetryObserver[] | undefined,
  metrics: RetryObserver | undefined,
  service: StorageService,
): readonly RetryObserver[] | undefined {
  if (observers !== undefined && !Array.isArray(observers)) return observers;
  // Checked here, before the retry log observer goes first: an error must give the index the caller wrote.
  for (const [index, observer] of (observers ?? []).entries()) {
    if (typeof observer !== "object" || observer === null) {
      throw new TypeError(`observers[${index}] must be a RetryObserver object; got ${describeValue(observer)}.`);
    }
  }
  const logs = createRetryLogObserver({ service });
  return metrics === undefined ? [logs, ...(observers ?? [])] : [logs, ...(observers ?? []), metrics];
}

/**
 * `secondaryReads` for an install, checked against the client's endpoint now: `true` on an
 * endpoint with no `-secondary` twin by convention (a custom domain, Cosmos DB) is refused
 * rather than silently never used.
 */
function resolveInstallSecondaryReads(target: unknown, option: unknown): SecondaryReadOptions | undefined {
  const settings = resolveSecondaryReads(option);
  if (settings === undefined) return undefined;
  const endpoint = endpointAddress(target, undefined);
  if (settings.endpoint === undefined && endpoint !== undefined && endpoint.secondaryUrl(undefined) === undefined) {
    throw new TypeError(
      "secondaryReads is true, but the client's endpoint has no -secondary twin by convention (a custom domain, Cosmos DB, " +
        "or an endpoint already on the secondary); pass secondaryReads: { endpoint } naming the secondary.",
    );
  }
  return settings.endpoint === undefined ? {} : { endpoint: settings.endpoint };
}

function resolveService(target: unknown, service: unknown): StorageService {
  const detected = detectService(target);
  if (service !== undefined) {
    const chosen = validateChoiceOption("service", service, STORAGE_SERVICES);
    // A wrong service would scope, label and retry every request by the wrong rules, silently.
    if (detected !== undefined && detected !== chosen) {
      throw new TypeError(
        `service is "${chosen}", but the target is a ${detected} client (from its endpoint or class); ` +
          `pass service: "${detected}" or leave it out.`,
      );
    }
    return chosen;
  }
  if (detected === undefined) {
    throw new TypeError(
      'service is required: the target\'s endpoint and type do not tell which service it is ("table", "blob" or "queue").',
    );
  }
  return detected;
}

function resolveRetry(
  retry: RetryStrategy | RetryStrategyConfig | PresetRetryOptions | undefined,
  presetRetry: (typeof SERVICE_PRESETS)[StorageService]["retry"],
): RetryStrategy {
  if (retry === undefined) return createRetryStrategy({ strategy: "exponential", ...presetRetry });
  if (isRetryStrategy(retry)) return retry;
  if (completesPreset(retry)) return createRetryStrategy({ ...presetRetry, ...retry, strategy: "exponential" });
  return createRetryStrategy(retry as RetryStrategyConfig);
}

/** True for a `retry` config the preset completes: an `"exponential"` one, or one naming no strategy. */
function completesPreset(retry: unknown): boolean {
  if (typeof retry !== "object" || retry === null || Array.isArray(retry) || isRetryStrategy(retry)) return false;
  const { strategy } = retry as { strategy?: unknown };
  return strategy === undefined || strategy === "exponential";
}

/**
 * `backoff` for an install: yours (exponential configs completed from the preset's numbers
 * for the class), else the preset's while `retry` is the preset's too.
 */
function resolveBackoff(
  backoff: unknown,
  retry: RetryStrategy | RetryStrategyConfig | PresetRetryOptions | undefined,
  preset: (typeof SERVICE_PRESETS)[StorageService],
): BackoffByClass | undefined {
  if (backoff === undefined) {
    if (retry !== undefined && !completesPreset(retry)) return undefined;
    const byClass: BackoffByClass = {};
    for (const cls of RETRIABLE_CLASSES) {
      const numbers = preset.backoff[cls];
      if (numbers !== undefined) byClass[cls] = { strategy: "exponential", ...numbers };
    }
    return byClass;
  }
  // Anything but an options object goes to the policy as it is, to be rejected there by name.
  if (typeof backoff !== "object" || backoff === null || Array.isArray(backoff)) return backoff as BackoffByClass;
  const byClass: Record<string, unknown> = { ...backoff };
  for (const cls of RETRIABLE_CLASSES) {
    const config = byClass[cls] as { strategy?: unknown } | undefined;
    // The class's own preset numbers, else the service's (blob waits up to 30 s, not the library's 10 s); `retry` caps the count.
    const { maxRetries: _cappedByRetry, ...serviceNumbers } = preset.retry;
    const numbers = preset.backoff[cls] ?? serviceNumbers;
    if (typeof config === "object" && config !== null && config.strategy === "exponential") {
      byClass[cls] = { ...numbers, ...config };
    }
  }
  return byClass as BackoffByClass;
}

/** The breaker for `option`: none for `false`, the defaults for undefined. Creating one starts no timer. */
function createCircuitBreaker(option: unknown, service: StorageService): PartitionBreaker | undefined {
  if (option === false) return undefined;
  if (option === undefined) return createPartitionBreakerAt("circuitBreaker", { service });
  if (isPartitionBreaker(option)) return option;
  if (typeof option !== "object" || option === null || Array.isArray(option)) {
    throw new TypeError(`circuitBreaker must be an options object or false; got ${describeValue(option)}.`);
  }
  return createPartitionBreakerAt("circuitBreaker", { service, ...(option as PartitionBreakerOptions) });
}

/**
 * The metrics observer for `option`: none for `false`; OpenTelemetry when the options choose it;
 * otherwise Prometheus, whose default (undefined) quietly needs prom-client: without it, none.
 */
function createMetrics(
  option: MetricsOptions | OpenTelemetryMetricsOptions | false | undefined,
  service: StorageService,
  withSecondaryReads: boolean,
): MetricsObserver | undefined {
  if (option === false) return undefined;
  if (choosesOpenTelemetry(option)) return createOpenTelemetryMetricsObserverAt("metrics", service, option as OpenTelemetryMetricsOptions);
  if (option === undefined && !isPeerInstalled("prom-client")) {
    warnNoPromClientOnce();
    return undefined;
  }
  // null is a mistake to name, not "defaults": resolveMetricsOptions rejects it.
  return createPrometheusObserver(service, option === undefined ? {} : (option as MetricsOptions), withSecondaryReads, "metrics");
}

let warnedNoPromClient = false;
/** Metrics are on by default, so their silent absence is worth one line, once per process. */
function warnNoPromClientOnce(): void {
  if (warnedNoPromClient) return;
  warnedNoPromClient = true;
  logger.warning(
    "installResilience: no metrics, because prom-client is not installed; install it, pass metrics: { meter } for OpenTelemetry, or metrics: false to say so.",
  );
}

/** `ambiguousWrites` for an install: on by default for Tables, refused for services without entity writes. */
function resolveInstallAmbiguousWrites(option: unknown, service: StorageService): ReturnType<typeof resolveAmbiguousWrites> {
  if (service !== "table") {
    if (option === undefined || option === false) return undefined;
    throw new TypeError(`ambiguousWrites is only supported for the table service; got it for "${service}".`);
  }
  if (typeof option === "object" && option !== null && "readBackRoutes" in option) {
    throw new TypeError("ambiguousWrites.readBackRoutes is not an installResilience option: the install makes its own (it is for hand-built pipelines).");
  }
  return resolveAmbiguousWrites(option === undefined ? true : option);
}

/** Removes the whole Retry phase and any SDK retry policy placed elsewhere. */
function removeRetryPolicies(pipeline: Pipeline): PipelinePolicy[] {
  const removed = pipeline.removePolicy({ phase: "Retry" });
  for (const name of SDK_RETRY_POLICY_NAMES) removed.push(...pipeline.removePolicy({ name }));
  return removed;
}

/** The storage account a client talks to, read from its URL as a request's would be; undefined when it has none. */
function accountOf(target: unknown, service: StorageService): string | undefined {
  return endpointAddress(target, service)?.account;
}

/** The address of a client's own URL (its endpoint), read as a request's would be; undefined when the client has no URL. */
function endpointAddress(target: unknown, service: StorageService | undefined): RequestAddress | undefined {
  const url = (target as { url?: unknown } | null)?.url;
  return typeof url === "string" ? readRequestAddress(createPipelineRequest({ url, method: "GET" }), service) : undefined;
}

/** A breaker from `createPartitionBreaker()` (duck-typed: another copy of the package makes one too). */
function isPartitionBreaker(value: unknown): value is PartitionBreaker {
  const candidate = value as Partial<PartitionBreaker> | null;
  return (
    typeof candidate === "object" &&
    candidate !== null &&
    typeof candidate.admit === "function" &&
    typeof candidate.record === "function" &&
    typeof candidate.statusOf === "function" &&
    typeof candidate.dispose === "function"
  );
}
