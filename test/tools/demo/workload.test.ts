import { describe, expect, it } from "vitest";
import {
  BATCH_SIZE,
  HOT_SHARE,
  isWrite,
  meanEntitiesPerOperation,
  partitionShares,
  planWorkload,
  SEEDED_ROWS,
  seededRowKey,
  SURGE_MULTIPLIER,
  throttleTargetPerSecond,
} from "../../../tools/demo/workload.js";

const options = { durationInMs: 20_000, ratePerSecond: 40, partitions: 4, seed: 1 };

describe("planWorkload", () => {
  it("is deterministic for a seed and differs between seeds", () => {
    expect(planWorkload(options)).toEqual(planWorkload(options));
    expect(planWorkload({ ...options, seed: 2 }).operations).not.toEqual(planWorkload(options).operations);
  });

  it("fires in time order within the duration, ids in firing order", () => {
    const { operations } = planWorkload(options);
    operations.forEach((op, i) => {
      expect(op.id).toBe(i);
      expect(op.atInMs).toBeGreaterThanOrEqual(0);
      expect(op.atInMs).toBeLessThanOrEqual(options.durationInMs);
      if (i > 0) expect(op.atInMs).toBeGreaterThanOrEqual(operations[i - 1]!.atInMs);
    });
  });

  it("offers about the asked rate, plus the hot partition's surge", () => {
    const plan = planWorkload(options);
    const surgeSeconds = (plan.surge.endInMs - plan.surge.startInMs) / 1000;
    const expected = options.ratePerSecond * 20 + options.ratePerSecond * HOT_SHARE * (SURGE_MULTIPLIER - 1) * surgeSeconds;
    expect(plan.operations.length).toBeGreaterThan(expected * 0.85);
    expect(plan.operations.length).toBeLessThan(expected * 1.15);
  });

  it("sends the hot partition its share, doubled during the surge", () => {
    const plan = planWorkload({ ...options, durationInMs: 200_000 });
    const hot = plan.operations.filter((op) => op.partition === "p0");
    const inSurge = hot.filter((op) => op.atInMs >= plan.surge.startInMs && op.atInMs < plan.surge.endInMs).length;
    const surgeRate = inSurge / ((plan.surge.endInMs - plan.surge.startInMs) / 1000);
    const outside = (hot.length - inSurge) / ((200_000 - (plan.surge.endInMs - plan.surge.startInMs)) / 1000);
    expect(outside).toBeCloseTo(options.ratePerSecond * HOT_SHARE, -1);
    expect(surgeRate / outside).toBeGreaterThan(1.7);
    expect(surgeRate / outside).toBeLessThan(2.3);
    expect(plan.hotPartition).toBe("p0");
    expect(plan.partitions).toEqual(["p0", "p1", "p2", "p3"]);
  });

  it("gives every write fresh RowKeys, batches of BATCH_SIZE, and reads of seeded rows", () => {
    const { operations } = planWorkload(options);
    const written = operations.filter((op) => isWrite(op.kind)).flatMap((op) => op.rowKeys.map((key) => `${op.partition}/${key}`));
    expect(new Set(written).size).toBe(written.length);
    for (const op of operations) {
      if (op.kind === "batch") expect(op.rowKeys).toHaveLength(BATCH_SIZE);
      if (op.kind === "read") expect(Array.from({ length: SEEDED_ROWS }, (_, i) => seededRowKey(i))).toContain(op.rowKeys[0]);
      if (op.kind === "query") expect(op.rowKeys).toEqual([]);
    }
    expect(new Set(operations.map((op) => op.kind))).toEqual(new Set(["insert", "upsert", "read", "query", "batch"]));
  });
});

describe("shares and the throttling target", () => {
  it.each([
    [1, [1]],
    [2, [0.5, 0.5]],
    [4, [0.4, 0.2, 0.2, 0.2]],
  ])("%i partitions share %j", (count, shares) => {
    const actual = partitionShares(count);
    expect(actual).toHaveLength(shares.length);
    actual.forEach((share, i) => expect(share).toBeCloseTo(shares[i]!));
  });

  it("sits 25 % above the busiest partition's base load, so only the surge passes it", () => {
    // 40 ops/s, hot share 0.4, 1.6 entities per operation: 25.6 entities/s, target 32.
    expect(meanEntitiesPerOperation()).toBeCloseTo(1.6);
    expect(throttleTargetPerSecond(40, 4)).toBe(32);
    const base = 40 * 0.4 * meanEntitiesPerOperation();
    expect(throttleTargetPerSecond(40, 4)).toBeGreaterThan(base);
    expect(throttleTargetPerSecond(40, 4)).toBeLessThan(base * SURGE_MULTIPLIER);
  });

  it("is never below one batch, so a batch can always pass", () => {
    expect(throttleTargetPerSecond(1, 26)).toBe(BATCH_SIZE);
  });
});
