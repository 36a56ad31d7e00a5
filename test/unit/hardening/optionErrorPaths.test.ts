import { describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import {
  createMetricsObserver,
  createOpenTelemetryMetricsObserver,
  createPartitionBreaker,
  createRetryBudget,
  createRetryLogObserver,
  decorrelatedJitterBackoff,
  exponentialBackoff,
  fixedBackoff,
  installResilience,
  resilientRetryPolicy,
  startMetricsServer,
} from "../../../src/index.js";
import { createRetryStrategy } from "../../../src/backoff/createRetryStrategy.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
import { thrown } from "../../support/thrown.js";

// One style for every option error: a TypeError or RangeError whose message starts with the
// option's full dotted path as the caller wrote it, from installResilience's options down, or
// from the options of the factory that was called.

const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
const tableClient = () => new TableClient("https://acct.table.core.windows.net", "orders", credential);

/** [options, the path the error must start with]. */
const INSTALL_CASES: Array<[Record<string, unknown>, string]> = [
  [{ service: "file" }, "service"],
  [{ service: "blob" }, "service"],
  [{ retry: { maxRetries: -1 } }, "retry.maxRetries"],
  [{ retry: { maxRetries: 1.5 } }, "retry.maxRetries"],
  [{ retry: { baseDelayInMs: "1" } }, "retry.baseDelayInMs"],
  [{ retry: { minDelayInMs: -1 } }, "retry.minDelayInMs"],
  [{ retry: { maxDelayInMs: null } }, "retry.maxDelayInMs"],
  [{ retry: { minDelayInMs: 20_000, maxDelayInMs: 10_000 } }, "retry.minDelayInMs"],
  [{ retry: { jitter: 1 } }, "retry.jitter"],
  [{ retry: { random: 1 } }, "retry.random"],
  [{ retry: { retries: 3 } }, "retry.retries"],
  [{ retry: { strategy: "sometimes" } }, "retry.strategy"],
  [{ retry: { strategy: "fixed", delayInMs: -1 } }, "retry.delayInMs"],
  [{ retry: { strategy: "fixed", maxRetries: Number.NaN } }, "retry.maxRetries"],
  [{ retry: { strategy: "decorrelated", baseDelayInMs: 0 } }, "retry.baseDelayInMs"],
  [{ retry: { strategy: "decorrelated", baseDelayInMs: 50, maxDelayInMs: 10 } }, "retry.baseDelayInMs"],
  [{ retry: { strategy: "none", maxRetries: 1 } }, "retry.maxRetries"],
  [{ retry: null }, "retry"],
  [{ retry: { delayInMs: () => 1, maxRetries: -1, maxDelayInMs: 1 } }, "retry.maxRetries"],
  [{ backoff: 1 }, "backoff"],
  [{ backoff: { slow: {} } }, "backoff.slow"],
  [{ backoff: { transient: { strategy: "fixed", delayInMs: -5 } } }, "backoff.transient.delayInMs"],
  [{ backoff: { throttled: { strategy: "exponential", jitter: 2 } } }, "backoff.throttled.jitter"],
  [{ backoff: { timeout: { strategy: "exponential", maxRetries: 7 } } }, "backoff.timeout.maxRetries"],
  [{ backoff: { timeout: { strategy: "odd" } } }, "backoff.timeout.strategy"],
  [{ maxElapsedInMs: 0 }, "maxElapsedInMs"],
  [{ maxElapsedInMs: null }, "maxElapsedInMs"],
  [{ tryTimeoutInMs: -1 }, "tryTimeoutInMs"],
  [{ maxRetryAfterInMs: "5" }, "maxRetryAfterInMs"],
  [{ classification: 1 }, "classification"],
  [{ classification: { retriableStatusCodes: [42] } }, "classification.retriableStatusCodes"],
  [{ classification: { retriableStatusCodes: 503 } }, "classification.retriableStatusCodes"],
  [{ classification: { nonRetriableErrorCodes: [""] } }, "classification.nonRetriableErrorCodes"],
  [{ classification: { classify: "yes" } }, "classification.classify"],
  [{ classification: { retryable: [] } }, "classification.retryable"],
  [{ observers: {} }, "observers"],
  [{ observers: [null] }, "observers[0]"],
  [{ circuitBreaker: 1 }, "circuitBreaker"],
  [{ circuitBreaker: { mode: "sometimes" } }, "circuitBreaker.mode"],
  [{ circuitBreaker: { mode: null } }, "circuitBreaker.mode"],
  [{ circuitBreaker: { service: "file" } }, "circuitBreaker.service"],
  [{ circuitBreaker: { getScope: "p" } }, "circuitBreaker.getScope"],
  [{ circuitBreaker: { resetTimeoutInMs: 0 } }, "circuitBreaker.resetTimeoutInMs"],
  [{ circuitBreaker: { consecutiveFailures: 0 } }, "circuitBreaker.consecutiveFailures"],
  [{ circuitBreaker: { rollingWindowInMs: 1.5 } }, "circuitBreaker.rollingWindowInMs"],
  [{ circuitBreaker: { maxScopes: 0 } }, "circuitBreaker.maxScopes"],
  [{ circuitBreaker: { idleTtlInMs: -1 } }, "circuitBreaker.idleTtlInMs"],
  [{ circuitBreaker: { threshold: 5 } }, "circuitBreaker.threshold"],
  [{ circuitBreaker: { pacing: 1 } }, "circuitBreaker.pacing"],
  [{ circuitBreaker: { pacing: null } }, "circuitBreaker.pacing"],
  // Pacing's options were removed (a boolean now): an object of them is refused as a whole.
  [{ circuitBreaker: { pacing: { minRatePerSecond: 0 } } }, "circuitBreaker.pacing"],
  [{ metrics: 1 }, "metrics"],
  [{ metrics: { sink: "otel" } }, "metrics.sink"],
  [{ metrics: { registry: {} } }, "metrics.registry"],
  [{ metrics: { prefix: "1bad" } }, "metrics.prefix"],
  [{ metrics: { prefix: null } }, "metrics.prefix"],
  [{ metrics: { registry: new Registry(), partitionLabel: 1 } }, "metrics.partitionLabel"],
  [{ metrics: { registry: new Registry(), partitionLabel: { topN: 0 } } }, "metrics.partitionLabel.topN"],
  [{ metrics: { registry: new Registry(), partitionLabel: { minThrottles: -1 } } }, "metrics.partitionLabel.minThrottles"],
  [{ metrics: { registry: new Registry(), partitionLabel: { top: 1 } } }, "metrics.partitionLabel.top"],
  [{ metrics: { registry: new Registry(), bucketsInSeconds: [] } }, "metrics.bucketsInSeconds"],
  [{ metrics: { registry: new Registry(), bucketsInSeconds: [1, -2] } }, "metrics.bucketsInSeconds[1]"],
  [{ metrics: { registry: new Registry(), labels: {} } }, "metrics.labels"],
  [{ metrics: { meter: {} } }, "metrics.meter"],
  [{ metrics: { sink: "opentelemetry", registry: new Registry() } }, "metrics.registry"],
  [{ ambiguousWrites: 1 }, "ambiguousWrites"],
  [{ ambiguousWrites: { readBackTimeoutInMs: 0 } }, "ambiguousWrites.readBackTimeoutInMs"],
  [{ ambiguousWrites: { readBackRoutes: {} } }, "ambiguousWrites.readBackRoutes"],
  [{ ambiguousWrites: { timeout: 1 } }, "ambiguousWrites.timeout"],
  [{ retryBudget: 1 }, "retryBudget"],
  [{ retryBudget: { retryRatio: -1 } }, "retryBudget.retryRatio"],
  [{ retryBudget: { minRetriesPerSecond: "1" } }, "retryBudget.minRetriesPerSecond"],
  [{ retryBudget: { windowInMs: 1 } }, "retryBudget.windowInMs"],
  [{ retryBudget: { now: 1 } }, "retryBudget.now"],
  [{ retryBudget: { ratio: 1 } }, "retryBudget.ratio"],
  [{ secondaryReads: 1 }, "secondaryReads"],
  [{ secondaryReads: { endpoint: "ftp://x" } }, "secondaryReads.endpoint"],
  [{ secondaryReads: { endpoint: 1 } }, "secondaryReads.endpoint"],
  [{ secondaryReads: { url: "https://x" } }, "secondaryReads.url"],
  [{ retries: 3 }, "retries"],
];

/** [what is called, the path the error must start with]. */
const FACTORY_CASES: Array<[string, () => unknown, string]> = [
  ["exponentialBackoff", () => exponentialBackoff({ maxRetries: -1 }), "maxRetries"],
  ["exponentialBackoff", () => exponentialBackoff({ minDelayInMs: 5, maxDelayInMs: 1 }), "minDelayInMs"],
  ["exponentialBackoff", () => exponentialBackoff({ wait: 1 } as never), "wait"],
  ["fixedBackoff", () => fixedBackoff({ delayInMs: -1 }), "delayInMs"],
  ["decorrelatedJitterBackoff", () => decorrelatedJitterBackoff({ random: 1 } as never), "random"],
  ["createRetryStrategy", () => createRetryStrategy({ strategy: "fixed", maxRetries: -1 }), "retry.maxRetries"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ retry: { strategy: "exponential", jitter: 1 } }), "retry.jitter"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ maxElapsedInMs: 0 }), "maxElapsedInMs"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ retryBudget: { retryRatio: -1 } }), "retryBudget.retryRatio"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ gate: {} as never }), "gate"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ service: "file" as never }), "service"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ random: 1 as never }), "random"],
  ["resilientRetryPolicy", () => resilientRetryPolicy({ retries: 1 } as never), "retries"],
  ["createPartitionBreaker", () => createPartitionBreaker({ resetTimeoutInMs: 0 }), "resetTimeoutInMs"],
  ["createPartitionBreaker", () => createPartitionBreaker({ mode: "fail" } as never), "mode"],
  ["createPartitionBreaker", () => createPartitionBreaker({ pacing: { minRatePerSecond: 0 } as never }), "pacing"],
  ["createPartitionBreaker", () => createPartitionBreaker({ rollingWindowInMs: 1000 } as never), "rollingWindowInMs"],
  ["createPartitionBreaker", () => createPartitionBreaker({ threshold: 1 } as never), "threshold"],
  ["createRetryBudget", () => createRetryBudget({ retryRatio: -1 }), "retryRatio"],
  ["createRetryBudget", () => createRetryBudget({ ratio: 1 } as never), "ratio"],
  ["createMetricsObserver", () => createMetricsObserver("table", { registry: new Registry(), prefix: "1bad" }), "prefix"],
  ["createMetricsObserver", () => createMetricsObserver("table", { registry: new Registry(), partitionLabel: { topN: 0 } }), "partitionLabel.topN"],
  ["createOpenTelemetryMetricsObserver", () => createOpenTelemetryMetricsObserver("table", { meter: {} as never }), "meter"],
  ["createRetryLogObserver", () => createRetryLogObserver({ service: "file" as never }), "service"],
];

describe("every option error starts with the option's full dotted path", () => {
  it.each(INSTALL_CASES)("installResilience(client, %j) -> %s", (options, path) => {
    const error = thrown(() => installResilience(tableClient(), options as never));
    expect([TypeError, RangeError]).toContain(error.constructor);
    expect(error.message.startsWith(`${path} `), error.message).toBe(true);
  });

  it.each(FACTORY_CASES)("%s -> %s", (_name, action, path) => {
    const error = thrown(action);
    expect([TypeError, RangeError]).toContain(error.constructor);
    expect(error.message.startsWith(`${path} `), error.message).toBe(true);
  });

  it("startMetricsServer rejects a bad option naming it", async () => {
    const error = (await startMetricsServer({ port: -1 }).catch((e: unknown) => e)) as Error;
    expect([TypeError, RangeError]).toContain(error.constructor);
    expect(error.message.startsWith("port "), error.message).toBe(true);
  });
});
