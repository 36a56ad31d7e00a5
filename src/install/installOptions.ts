// installResilience's options resolved into what the policies take: the service, the preset's retry and
// backoff, the breaker, the metrics sink, ambiguous writes and secondary reads checked against the client.
import type { BackoffByClass } from "../backoff/backoffByClass.js";
import { RETRIABLE_CLASSES } from "../classification/outcomeClass.js";
import { createRetryStrategy, isRetryStrategy, type RetryStrategyConfig } from "../backoff/createRetryStrategy.js";
import type { RetryStrategy } from "../backoff/retryStrategy.js";
import { createPipelineRequest, type PipelinePolicy } from "@azure/core-rest-pipeline";
import { readRequestAddress, type RequestAddress } from "../address/requestAddress.js";
import { createPartitionBreaker, type PartitionBreaker } from "../breaker/partitionBreaker.js";
import { createPrometheusObserver, resolveMetricsOptions, type MetricsObserver, type MetricsOptions } from "../metrics/metricsObserver.js";
import {
  choosesOpenTelemetry,
  createOpenTelemetryMetricsObserver,
  resolveOpenTelemetryMetricsOptions,
  type OpenTelemetryMetricsOptions,
} from "../metrics/openTelemetryObserver.js";
import { isPeerInstalled, isPeerResolvable } from "../metrics/optionalPeer.js";
import type { RetryObserver } from "../observers/retryEvents.js";
import { createTracingObserver } from "../tracing/tracingObserver.js";
import { resendCountPolicy } from "../tracing/resendCountPolicy.js";
import { resolveTracingOptions, type TracingOptions } from "../tracing/tracingOptions.js";
import { logger } from "../logging/logger.js";
import { resolvePartitionBreakerOptions } from "../breaker/partitionBreakerOptions.js";
import { resolveAmbiguousWrites } from "../policies/retryPolicyOptions.js";
import { resolveSecondaryReads, type SecondaryReadOptions } from "../policies/secondaryReads.js";
import type { ServicePreset } from "./servicePresets.js";
import { describeValue } from "../validation/describeValue.js";
import { hasMethods, isRecord, validateChoiceOption } from "../validation/optionSchema.js";
import { detectServiceFromUrl } from "../address/storageHost.js";
import { STORAGE_SERVICES, type StorageService } from "../address/partitionScope.js";
import type { InstallResilienceOptions } from "./installResilience.js";

/**
 * `secondaryReads` for an install, checked against the client's endpoint now: `true` on an
 * endpoint with no `-secondary` twin by convention (a custom domain, Cosmos DB) is refused
 * rather than silently never used.
 */
export function resolveInstallSecondaryReads(target: unknown, option: unknown): SecondaryReadOptions | undefined {
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

/** `service` for an install: the one given, checked against what the client's endpoint or class tells, else that. */
export function resolveService(target: unknown, service: unknown): StorageService {
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

/** `retry` for an install: the preset's exponential backoff, completed by (or replaced with) yours. */
export function resolveRetry(retry: InstallResilienceOptions["retry"], presetRetry: ServicePreset["retry"]): RetryStrategy {
  if (retry === undefined) return createRetryStrategy({ strategy: "exponential", ...presetRetry });
  if (isRetryStrategy(retry)) return retry;
  if (completesPreset(retry)) return createRetryStrategy({ ...presetRetry, ...retry, strategy: "exponential" });
  return createRetryStrategy(retry as RetryStrategyConfig);
}

/** True for a `retry` config the preset completes: an `"exponential"` one, or one naming no strategy. */
function completesPreset(retry: unknown): boolean {
  return isRecord(retry) && !isRetryStrategy(retry) && (retry.strategy === undefined || retry.strategy === "exponential");
}

/**
 * `backoff` for an install: yours (exponential configs completed from the preset's numbers
 * for the class), else the preset's while `retry` is the preset's too.
 */
export function resolveBackoff(backoff: unknown, retry: InstallResilienceOptions["retry"], preset: ServicePreset): BackoffByClass | undefined {
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
  if (!isRecord(backoff)) return backoff as BackoffByClass;
  const byClass: Record<string, unknown> = { ...backoff };
  for (const cls of RETRIABLE_CLASSES) {
    const config = byClass[cls];
    // The class's own preset numbers, else the service's (blob waits up to 30 s, not the library's 10 s); `retry` caps the count.
    const { maxRetries: _cappedByRetry, ...serviceNumbers } = preset.retry;
    const numbers = preset.backoff[cls] ?? serviceNumbers;
    if (isRecord(config) && config.strategy === "exponential") {
      byClass[cls] = { ...numbers, ...config };
    }
  }
  return byClass as BackoffByClass;
}

/** The breaker for `option`: none for `false`, the defaults for undefined. Creating one starts no timer. */
export function createCircuitBreaker(option: unknown, service: StorageService): PartitionBreaker | undefined {
  if (option === false) return undefined;
  if (isPartitionBreaker(option)) return option;
  if (option !== undefined && !isRecord(option)) {
    throw new TypeError(`circuitBreaker must be an options object or false; got ${describeValue(option)}.`);
  }
  const options = { service, ...option };
  // Checked where they sit first, so that errors name `circuitBreaker.resetTimeoutInMs`; the factory's own check then passes.
  resolvePartitionBreakerOptions(options, "circuitBreaker");
  return createPartitionBreaker(options);
}

/**
 * The metrics observer for `option`: none for `false`; OpenTelemetry when the options choose it;
 * otherwise Prometheus, whose default (undefined) quietly needs prom-client: without it, none.
 */
export function createMetrics(
  option: MetricsOptions | OpenTelemetryMetricsOptions | false | undefined,
  service: StorageService,
  withSecondaryReads: boolean,
): MetricsObserver | undefined {
  if (option === false) return undefined;
  // Each sink's options are checked where they sit first, so that errors name `metrics.prefix`; the factory's own check then passes.
  if (choosesOpenTelemetry(option)) {
    resolveOpenTelemetryMetricsOptions(option as OpenTelemetryMetricsOptions, "metrics");
    return createOpenTelemetryMetricsObserver(service, option as OpenTelemetryMetricsOptions);
  }
  if (option === undefined && !isPeerInstalled("prom-client")) {
    warnNoPromClientOnce();
    return undefined;
  }
  // null is a mistake to name, not "defaults": resolveMetricsOptions rejects it.
  const options = option === undefined ? {} : (option as MetricsOptions);
  resolveMetricsOptions(options, "metrics");
  return createPrometheusObserver(service, options, withSecondaryReads);
}

/**
 * The tracing observer and the resend-count policy for `option`: none for `false`, and none when
 * `@opentelemetry/api` is not installed (no tracer can be either: nothing to say, nothing to pay).
 */
export function createTracing(
  option: Omit<TracingOptions, "circuitBreaker"> | false | undefined,
  circuitBreaker: PartitionBreaker | undefined,
): { observer: RetryObserver; resendCount: PipelinePolicy } | undefined {
  if (option === false) return undefined;
  // null is a mistake to name, not "defaults".
  const { partitionAttribute } = resolveTracingOptions(option === undefined ? {} : option, "tracing");
  // Resolved, not loaded: the observer loads it at the first call it has to look a span up for.
  if (!isPeerResolvable("@opentelemetry/api")) return undefined;
  return { observer: createTracingObserver({ partitionAttribute, circuitBreaker }), resendCount: resendCountPolicy() };
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
export function resolveInstallAmbiguousWrites(option: unknown, service: StorageService): ReturnType<typeof resolveAmbiguousWrites> {
  if (service !== "table") {
    if (option === undefined || option === false) return undefined;
    throw new TypeError(`ambiguousWrites is only supported for the table service; got it for "${service}".`);
  }
  for (const key of ["readBackPolicy", "readBackRoutes"]) {
    if (isRecord(option) && key in option) {
      throw new TypeError(`ambiguousWrites.${key} is not an installResilience option: the install makes its own (it is for hand-built pipelines).`);
    }
  }
  return resolveAmbiguousWrites(option === undefined ? true : option);
}

/** The storage account a client talks to, read from its URL as a request's would be; undefined when it has none. */
export function accountOf(target: unknown, service: StorageService): string | undefined {
  return endpointAddress(target, service)?.account;
}

/** The address of a client's own URL (its endpoint), read as a request's would be; undefined when the client has no URL. */
function endpointAddress(target: unknown, service: StorageService | undefined): RequestAddress | undefined {
  const url = (target as { url?: unknown } | null)?.url;
  return typeof url === "string" ? readRequestAddress(createPipelineRequest({ url, method: "GET" }), service) : undefined;
}

/** A breaker from `createPartitionBreaker()` (duck-typed: another copy of the package makes one too). */
export const isPartitionBreaker = hasMethods("admit", "record", "statusOf", "dispose") as (value: unknown) => value is PartitionBreaker;

const CLASS_NAMES: Readonly<Record<string, StorageService>> = {
  TableClient: "table",
  TableServiceClient: "table",
  BlobServiceClient: "blob",
  ContainerClient: "blob",
  BlobClient: "blob",
  BlockBlobClient: "blob",
  AppendBlobClient: "blob",
  PageBlobClient: "blob",
  BlobBatchClient: "blob",
  QueueServiceClient: "queue",
  QueueClient: "queue",
};

/**
 * The service a client talks to: from the endpoint's host (`*.table.core.windows.net`,
 * sovereign clouds, `*.table.cosmos.azure.com`), else from the client's class name (Azurite's
 * path-style endpoints carry no service in the URL). Undefined when neither tells.
 */
function detectService(target: unknown): StorageService | undefined {
  const url = (target as { url?: unknown } | null)?.url;
  const fromUrl = typeof url === "string" ? detectServiceFromUrl(url) : undefined;
  if (fromUrl !== undefined) return fromUrl;
  return serviceFromClassName(target);
}

/** The service of the nearest SDK class in `target`'s prototype chain, so a user's subclass is recognised too. */
function serviceFromClassName(target: unknown): StorageService | undefined {
  if (typeof target !== "object" || target === null) return undefined;
  for (let proto: unknown = Object.getPrototypeOf(target); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    const className = (proto as { constructor?: { name?: unknown } }).constructor?.name;
    const service = typeof className === "string" && Object.hasOwn(CLASS_NAMES, className) ? CLASS_NAMES[className] : undefined;
    if (service !== undefined) return service;
  }
  return undefined;
}
