import { afterAll, beforeAll } from "vitest";
import { startRebalancingSimulator, type RebalancingSimulator, type SimulatorOptions } from "../../src/testing/simulator/rebalancingSimulator.js";
import { withAzurite, type AzuriteFixture } from "./withAzurite.js";

/** Azurite's Blob or Queue service behind a rebalancing simulator. */
export interface StorageSimulatorFixture extends AzuriteFixture {
  /** The simulator in front of Azurite; it scopes requests as the fixture's service. */
  readonly simulator: RebalancingSimulator;
  /** The account endpoint through the simulator: `${simulator.url}/devstoreaccount1`. */
  readonly proxyUrl: string;
  /** The account endpoint on Azurite itself, to check what was really stored. */
  readonly directUrl: string;
}

/**
 * Starts Azurite's Blob or Queue service and a simulator in front of it before the file's
 * tests; stops both after them. Azurite's path-style URLs name no service, so the
 * simulator is told which one it fronts (its XML error bodies and scopes follow it).
 */
export function withStorageSimulator(
  service: "blob" | "queue",
  options: Omit<SimulatorOptions, "target" | "service"> = {},
): StorageSimulatorFixture {
  const fixture = withAzurite({ services: [service] });
  let simulator: RebalancingSimulator | undefined;
  const directUrl = (): string => (service === "blob" ? fixture.azurite.blobUrl : fixture.azurite.queueUrl);
  beforeAll(async () => {
    simulator = await startRebalancingSimulator({ ...options, service, target: new URL(directUrl()).origin });
  });
  afterAll(async () => {
    await simulator?.stop();
  });
  const running = (): RebalancingSimulator => {
    if (simulator === undefined) throw new Error("The simulator is not running yet: use it inside a test or hook.");
    return simulator;
  };
  return {
    get azurite() {
      return fixture.azurite;
    },
    get simulator() {
      return running();
    },
    get proxyUrl() {
      return `${running().url}/${fixture.azurite.accountName}`;
    },
    get directUrl() {
      return directUrl();
    },
  };
}

let nameCounter = 0;

/** A container or queue name unique within the run: lower-case letters, digits and dashes, 3-63 characters. */
export function uniqueStorageName(prefix: string): string {
  nameCounter++;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${nameCounter}`.toLowerCase().slice(0, 63);
}
