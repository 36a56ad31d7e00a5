import { describe, expect, it } from "vitest";
import { entitiesPerOperation, meanEntitiesPerStressOperation, planRamp, rampRates, STRESS_BATCH_SIZE } from "../../../tools/stress/rampPlan.js";

describe("rampRates", () => {
  it.each([
    [250, 2500, 5, [250, 813, 1375, 1938, 2500]],
    [100, 100, 3, [100, 100, 100]],
    [10, 40, 2, [10, 40]],
    [10, 40, 1, [40]],
  ])("%i to %i in %i steps", (start, max, steps, rates) => {
    expect(rampRates(start, max, steps)).toEqual(rates);
  });
});

describe("planRamp", () => {
  const options = { startRate: 100, maxRate: 400, steps: 3, stepDurationInSeconds: 2, entities: 50, seed: 3 };
  const plan = planRamp(options);

  it("steps follow each other", () => {
    expect(plan.steps).toEqual([
      { index: 0, entitiesPerSecond: 100, startInMs: 0, endInMs: 2000 },
      { index: 1, entitiesPerSecond: 250, startInMs: 2000, endInMs: 4000 },
      { index: 2, entitiesPerSecond: 400, startInMs: 4000, endInMs: 6000 },
    ]);
  });

  it("each step's operations add up to about its rate in entities, evenly spaced inside it", () => {
    for (const step of plan.steps) {
      const ops = plan.operations.filter((op) => op.step === step.index);
      const entities = ops.reduce((sum, op) => sum + entitiesPerOperation(op.kind), 0);
      const asked = step.entitiesPerSecond * options.stepDurationInSeconds;
      expect(entities).toBeGreaterThan(asked * 0.75);
      expect(entities).toBeLessThan(asked * 1.25);
      expect(ops.length).toBe(Math.round(asked / meanEntitiesPerStressOperation()));
      for (const op of ops) {
        expect(op.atInMs).toBeGreaterThanOrEqual(step.startInMs);
        expect(op.atInMs).toBeLessThan(step.endInMs);
      }
    }
  });

  it("touches loaded rows only, a batch's rows distinct", () => {
    for (const op of plan.operations) {
      for (const row of op.rows) expect(row).toBeLessThan(options.entities);
      if (op.kind === "batch") {
        expect(op.rows).toHaveLength(STRESS_BATCH_SIZE);
        expect(new Set(op.rows).size).toBe(op.rows.length);
      }
      if (op.kind === "query") expect(op.rows).toEqual([]);
    }
    expect(new Set(plan.operations.map((op) => op.kind))).toEqual(new Set(["upsert", "read", "query", "batch"]));
  });

  it("is the same for the same seed", () => {
    expect(planRamp(options)).toEqual(plan);
  });
});
