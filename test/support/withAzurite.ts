import { Agent } from "node:http";
import type { PipelinePolicy } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential, TableClient, type TableServiceClientOptions } from "@azure/data-tables";
import { afterAll, beforeAll } from "vitest";
import { startAzurite, type RunningAzurite, type StartAzuriteOptions } from "../../src/testing/azurite/startAzurite.js";
import { startRebalancingSimulator, type RebalancingSimulator, type SimulatorOptions } from "../../src/testing/simulator/rebalancingSimulator.js";

/** Azurite for the tests of one file: started in beforeAll, stopped in afterAll. */
export interface AzuriteFixture {
  /** The running Azurite; throws if read before beforeAll ran. */
  readonly azurite: RunningAzurite;
}

/** Starts Azurite before the file's tests and stops it after them. */
export function withAzurite(options: StartAzuriteOptions = {}): AzuriteFixture {
  let azurite: RunningAzurite | undefined;
  beforeAll(async () => {
    azurite = await startAzurite(options);
  });
  afterAll(async () => {
    await azurite?.stop();
  });
  return {
    get azurite() {
      if (azurite === undefined) throw new Error("Azurite is not running yet: use it inside a test or hook.");
      return azurite;
    },
  };
}

/** Azurite's Tables service behind a rebalancing simulator, with client factories. */
export interface TableSimulatorFixture extends AzuriteFixture {
  /** The simulator in front of Azurite. */
  readonly simulator: RebalancingSimulator;
  /** The account endpoint through the simulator: `${simulator.url}/devstoreaccount1`. */
  readonly proxyTableUrl: string;
  /** A real TableClient that goes through the simulator; no retries unless `options` say so. */
  tableClient(table: string, options?: TableServiceClientOptions): TableClient;
  /** A real TableClient that talks to Azurite directly, to check what was really stored. */
  directTableClient(table: string): TableClient;
}

/**
 * Starts Azurite (Tables only) and a simulator in front of it before the file's tests;
 * stops both after them. Tests sharing the fixture clear faults and records themselves
 * (`simulator.clearFaults()`, `simulator.resetRecords()`), e.g. in a beforeEach.
 */
export function withTableSimulator(options: Omit<SimulatorOptions, "target"> = {}): TableSimulatorFixture {
  const fixture = withAzurite({ services: ["table"] });
  let simulator: RebalancingSimulator | undefined;
  beforeAll(async () => {
    simulator = await startRebalancingSimulator({ ...options, target: new URL(fixture.azurite.tableUrl).origin });
  });
  afterAll(async () => {
    await simulator?.stop();
  });
  const running = (): RebalancingSimulator => {
    if (simulator === undefined) throw new Error("The simulator is not running yet: use it inside a test or hook.");
    return simulator;
  };
  const client = (endpoint: string, table: string, options: TableServiceClientOptions = {}) =>
    new TableClient(endpoint, table, new AzureNamedKeyCredential(fixture.azurite.accountName, fixture.azurite.accountKey), {
      allowInsecureConnection: true,
      retryOptions: { maxRetries: 0 },
      ...options,
    });
  return {
    get azurite() {
      return fixture.azurite;
    },
    get simulator() {
      return running();
    },
    get proxyTableUrl() {
      return `${running().url}/${fixture.azurite.accountName}`;
    },
    tableClient(table, options) {
      return client(`${running().url}/${fixture.azurite.accountName}`, table, options);
    },
    directTableClient(table) {
      return client(fixture.azurite.tableUrl, table, { additionalPolicies: [{ policy: freshConnections, position: "perCall" }] });
    },
  };
}

/**
 * Sends each request on a connection of its own, closed after the answer. For the checking
 * client, which has no retries: Azurite closes a connection idle for 5 s (its keep-alive
 * timeout, which its command line cannot change for Tables), the SDKs' agent keeps idle
 * connections without a timeout of its own, and a request that reuses one just as Azurite
 * closes it fails with `socket hang up`, as the check after a test's 5 s run once did on a loaded machine.
 */
const NO_KEEP_ALIVE = new Agent({ keepAlive: false });
const freshConnections: PipelinePolicy = {
  name: "testFreshConnections",
  sendRequest(request, next) {
    request.agent = NO_KEEP_ALIVE;
    return next(request);
  },
};

let tableCounter = 0;

/** A table name unique within the run: letters and digits, starting with a letter, as Tables requires. */
export function uniqueTableName(prefix = "t"): string {
  tableCounter++;
  return `${prefix}${process.pid}x${Date.now().toString(36)}x${tableCounter}`.replace(/[^A-Za-z0-9]/g, "");
}
