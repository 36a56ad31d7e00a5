import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatFigures, runSoak } from "../soak/soakWorkload.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

// The short soak inside `npm test` (the long one is `npm run soak`): about 2,000 mixed writes
// through the simulator's random faults on real Azurite, then the store read directly.

const env = withTableSimulator({ seed: 2026 });
const table = uniqueTableName("soak");
const operations = Number(process.env.SOAK_OPERATIONS ?? 2000);

beforeAll(async () => {
  await env.directTableClient(table).createTable();
});
afterAll(() => {
  env.simulator.clearFaults();
});

describe("soak: what callers were told matches the store", () => {
  it(`${operations} mixed writes with resets, ServerBusy, OperationTimedOut and slow answers`, async () => {
    const figures = await runSoak({
      operations,
      workers: 24,
      rowsPerWorker: 8,
      seed: 7,
      client: env.tableClient(table),
      direct: env.directTableClient(table),
      simulator: env.simulator,
    });
    console.info(formatFigures("soak", figures));
    expect(figures.operations).toBe(operations);
    expect(figures.acknowledgedMissingViolations).toBe(0);
    expect(figures.failedButAppliedViolations).toBe(0);
    expect(figures.pendingPastDeadlineViolations).toBe(0);
    expect(figures.corruptViolations).toBe(0);
    // The faults really happened, and ambiguous writes really were settled.
    expect(figures.faultsInjected.resetAfterForward ?? 0).toBeGreaterThan(0);
    expect(figures.faultsInjected.slow ?? 0).toBeGreaterThan(0);
    expect(figures.ambiguousWrites.applied ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
