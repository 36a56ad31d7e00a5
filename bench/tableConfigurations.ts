// The configurations the rebalancing scenarios compare, each around a real TableClient.
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { Registry } from "prom-client";
import { createPartitionBreaker, installResilience } from "../src/index.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "azure-storage-resilience/testing";
import { createCockatielWiring } from "./cockatielWiring.js";

/**
 * The configurations of the open-loop rebalancing scenario, in the order the tables list them.
 * The last two make a new client per operation, as per-request code and Azure Functions do
 * (issue 18, item 3): each with a breaker of its own, which never learns, or all sharing one.
 */
export const CONFIGURATION_IDS = ["no-retry", "sdk-default", "cockatiel", "package", "package-fail", "package-per-operation", "package-shared"] as const;
/** The closed loop's: the defaults (an open-loop caller) next to the pool declared as what it is, and failFast. */
export const CLOSED_LOOP_CONFIGURATION_IDS = ["no-retry", "sdk-default", "cockatiel", "package", "package-declared", "package-fail"] as const;
export type ConfigurationId = (typeof CONFIGURATION_IDS)[number] | (typeof CLOSED_LOOP_CONFIGURATION_IDS)[number];

export const CONFIGURATION_LABELS: Readonly<Record<ConfigurationId, string>> = {
  "no-retry": "no retry",
  "sdk-default": "SDK default retry",
  cockatiel: "cockatiel retry + per-partition breaker",
  package: "this package (defaults: an open-loop caller)",
  "package-declared": "this package, caller: { concurrency: workers }",
  "package-fail": "this package, caller: { failFast: true }",
  "package-per-operation": "this package, a new client per operation (each its own breaker)",
  "package-shared": "this package, a new client per operation sharing one breaker",
};

/** A configured client: `run` performs one operation on one partition, the way that configuration would. */
export interface TableConfiguration {
  id: ConfigurationId;
  label: string;
  client: TableClient;
  run<T>(partitionKey: string, fn: (client: TableClient, signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T>;
  dispose(): void;
}

/** A TableClient on `endpoint` (an account URL), with the SDK's retry options as given. */
export function tableClient(endpoint: string, table: string, retryOptions?: { maxRetries: number }): TableClient {
  return new TableClient(endpoint, table, new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY), {
    allowInsecureConnection: true,
    ...(retryOptions === undefined ? {} : { retryOptions }),
  });
}

/** Builds configuration `id` on a client talking to `endpoint`. */
/** `workers`: the pool's size, which `package-declared` declares (`caller: { concurrency }`). */
export function createConfiguration(id: ConfigurationId, endpoint: string, table: string, workers?: number): TableConfiguration {
  const label = CONFIGURATION_LABELS[id];
  switch (id) {
    case "no-retry": {
      const client = tableClient(endpoint, table, { maxRetries: 0 });
      return { id, label, client, run: (_pk, fn, signal) => fn(client, signal), dispose: () => undefined };
    }
    case "sdk-default": {
      // The SDK's own defaults: defaultRetryPolicy, 3 retries, 1 s base, equal jitter.
      const client = tableClient(endpoint, table);
      return { id, label, client, run: (_pk, fn, signal) => fn(client, signal), dispose: () => undefined };
    }
    case "cockatiel": {
      const client = tableClient(endpoint, table, { maxRetries: 0 });
      const wiring = createCockatielWiring();
      return { id, label, client, run: (pk, fn, signal) => wiring.run(pk, (inner) => fn(client, anySignal(signal, inner)), signal), dispose: () => undefined };
    }
    case "package": {
      const client = tableClient(endpoint, table);
      // Defaults, except a fresh metrics registry instead of prom-client's global one.
      const handle = installResilience(client, { metrics: { registry: new Registry() } });
      return { id, label, client, run: (_pk, fn, signal) => fn(client, signal), dispose: () => handle.dispose() };
    }
    case "package-declared":
    case "package-fail": {
      // The defaults with the caller declared: a pool of `workers` (its waiters use only spare slots), or failFast (never waits).
      const client = tableClient(endpoint, table);
      if (id === "package-declared" && workers === undefined) throw new TypeError("package-declared needs the pool's size (workers).");
      const caller = id === "package-declared" ? { concurrency: workers as number } : { failFast: true };
      const handle = installResilience(client, { caller, metrics: { registry: new Registry() } });
      return { id, label, client, run: (_pk, fn, signal) => fn(client, signal), dispose: () => handle.dispose() };
    }
    case "package-per-operation":
    case "package-shared": {
      // A client made, installed on and disposed of for every operation; metrics on one registry for all.
      const registry = new Registry();
      const shared = id === "package-shared" ? createPartitionBreaker({ service: "table" }) : undefined;
      const client = tableClient(endpoint, table);
      const run = async <T>(_pk: string, fn: (client: TableClient, signal: AbortSignal) => Promise<T>, signal: AbortSignal): Promise<T> => {
        const perOperation = tableClient(endpoint, table);
        const handle = installResilience(perOperation, { metrics: { registry }, ...(shared === undefined ? {} : { circuitBreaker: shared }) });
        try {
          return await fn(perOperation, signal);
        } finally {
          handle.dispose();
        }
      };
      return { id, label, client, run, dispose: () => shared?.dispose() };
    }
  }
}

function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  return AbortSignal.any([a, b]);
}
