import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";
import { formatFigures, runSoak } from "./soakWorkload.js";

// `npm run soak`: the long soak, at least 20,000 mixed writes (SOAK_OPERATIONS to change it).
// Skipped in `npm test`, which runs the short one in test/integration/soak.test.ts.

const enabled = process.env.SOAK === "1";
const operations = Math.max(20_000, Number(process.env.SOAK_OPERATIONS ?? 20_000));

describe.skipIf(!enabled)("long soak", () => {
  const env = withTableSimulator({ seed: Number(process.env.SOAK_SEED ?? 20_260) });
  const table = uniqueTableName("longsoak");

  beforeAll(async () => {
    await env.directTableClient(table).createTable();
  });
  afterAll(() => {
    env.simulator.clearFaults();
  });

  it(`${operations} mixed writes: 0 acknowledged missing, 0 failed-but-applied unmarked, 0 pending past deadline`, async () => {
    const figures = await runSoak({
      operations,
      workers: 48,
      rowsPerWorker: 16,
      seed: Number(process.env.SOAK_SEED ?? 20_260),
      client: env.tableClient(table),
      direct: env.directTableClient(table),
      simulator: env.simulator,
    });
    console.info(formatFigures("long soak", figures));
    expect(figures.operations).toBe(operations);
    expect(figures.acknowledgedMissingViolations).toBe(0);
    expect(figures.failedButAppliedViolations).toBe(0);
    expect(figures.pendingPastDeadlineViolations).toBe(0);
    expect(figures.corruptViolations).toBe(0);
  }, 3_600_000);
});
