import { AzureNamedKeyCredential, TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { startAzurite, startRebalancingSimulator } from "azure-storage-resilience/testing";
import { entityCount } from "../load/entityCount.js";
import { KeyedTokenBucket } from "../load/tokenBucket.js";
import { STRESS_BATCH_SIZE } from "./rampPlan.js";
import type { StressTarget } from "./stressResult.js";

/** Where the stress test sends its requests, and how to make clients for it. */
export interface StressAccount {
  target: StressTarget;
  /** A new TableClient for `table` with the SDK's retry off (the caller installs the package's). */
  client(table: string): TableClient;
  /** The same for creating, loading and deleting the table: embedded, it bypasses the simulated throttling. */
  setupClient(table: string): TableClient;
  /** Stops what was started (embedded Azurite and the simulator). Idempotent. */
  stop(): Promise<void>;
}

const NO_SDK_RETRY: TableServiceClientOptions = { retryOptions: { maxRetries: 0 } };

/**
 * A real account from a connection string. Throws an error that never quotes the string
 * when it cannot be parsed.
 */
export function accountFromConnectionString(connectionString: string): StressAccount {
  // Plain http only when the string asks for it (an emulator); the SDK refuses to send keys over http otherwise.
  const allowInsecureConnection = /(?:^|;)\s*(?:DefaultEndpointsProtocol\s*=\s*http\s*(?:;|$)|TableEndpoint\s*=\s*http:\/\/)/i.test(connectionString);
  const make = (table: string) => TableClient.fromConnectionString(connectionString, table, { ...NO_SDK_RETRY, allowInsecureConnection });
  let probe: TableClient;
  try {
    probe = make("probe");
  } catch {
    throw new Error(
      "The connection string could not be parsed: expected DefaultEndpointsProtocol=...;AccountName=...;AccountKey=...;TableEndpoint=... or a SAS connection string.",
    );
  }
  const url = new URL(probe.url);
  const account = /(?:^|;)\s*AccountName\s*=\s*([^;]+)/i.exec(connectionString)?.[1]?.trim() ?? url.hostname.split(".")[0] ?? "unknown";
  return {
    target: { kind: "account", account, endpointHost: url.host, simulatedThrottleAt: null },
    client: make,
    setupClient: make,
    stop: async () => undefined,
  };
}

/**
 * Embedded Azurite (Tables, in memory), behind the rebalancing simulator throttling each
 * partition above `throttleAt` entities/s (none when 0): Azurite itself never throttles.
 */
export async function embeddedAccount(throttleAt: number): Promise<StressAccount> {
  // Its own process group: a terminal's Ctrl-C reaches only us, and we stop Azurite after the summary.
  const azurite = await startAzurite({ services: ["table"], detached: true });
  try {
    let endpoint = azurite.tableUrl;
    let stopSimulator: () => Promise<void> = async () => undefined;
    if (throttleAt > 0) {
      const simulator = await startRebalancingSimulator({ target: new URL(azurite.tableUrl).origin });
      // A quarter second of burst, so a step above the threshold is throttled within the step.
      const bucket = new KeyedTokenBucket(throttleAt, Math.max(STRESS_BATCH_SIZE, throttleAt / 4));
      simulator.addFault({
        name: "throttle",
        kind: "throttle",
        match: { predicate: (request) => request.scope?.partition !== undefined && !bucket.take(request.scope.partition, entityCount(request.path, request.body)) },
      });
      endpoint = `${simulator.url}/${azurite.accountName}`;
      stopSimulator = () => simulator.stop();
    }
    const credential = new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey);
    let stopping: Promise<void> | undefined;
    return {
      target: { kind: "embedded", account: azurite.accountName, endpointHost: new URL(azurite.tableUrl).host, simulatedThrottleAt: throttleAt > 0 ? throttleAt : null },
      client: (table) => new TableClient(endpoint, table, credential, { ...NO_SDK_RETRY, allowInsecureConnection: true }),
      setupClient: (table) => new TableClient(azurite.tableUrl, table, credential, { ...NO_SDK_RETRY, allowInsecureConnection: true }),
      stop: () => (stopping ??= stopSimulator().then(() => azurite.stop())),
    };
  } catch (error) {
    await azurite.stop();
    throw error;
  }
}
