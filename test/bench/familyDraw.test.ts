import { describe, expect, it } from "vitest";
import {
  attemptsBound,
  drawFamily,
  FAMILY_SHAPES,
  familyRules,
  FAULT_FAMILY,
  FULL_FAMILY_TIMING,
  pastTheEnd,
  type FamilyDraw,
  type FamilyFault,
  type FamilyShape,
} from "../../bench/familyDraw.js";
import { matchesRule } from "../../src/testing/simulator/faultRule.js";
import type { SimulatedRequestInfo } from "../../src/testing/simulator/faultRule.js";

// The fault family's draw is the benchmark's contract with whoever reads its figures: a seed
// must replay, the family must cover every shape, and the rules must leave the trickle alone.

const PARTITIONS = 10;
const seeds = (from: number, to: number): FamilyDraw[] => Array.from({ length: to - from + 1 }, (_, i) => drawFamily(from + i, PARTITIONS, FULL_FAMILY_TIMING));

function request(partition: string): SimulatedRequestInfo {
  return { method: "PUT", path: `/devstoreaccount1/t(PartitionKey='${partition}',RowKey='r1')`, service: "table", scope: { service: "table", account: "devstoreaccount1", resource: "t", partition }, headers: {}, body: undefined };
}

describe("drawFamily", () => {
  it("replays a seed exactly, and draws other faults for another seed", () => {
    expect(drawFamily(7, PARTITIONS, FULL_FAMILY_TIMING)).toEqual(drawFamily(7, PARTITIONS, FULL_FAMILY_TIMING));
    expect(drawFamily(7, PARTITIONS, FULL_FAMILY_TIMING).faults).not.toEqual(drawFamily(15, PARTITIONS, FULL_FAMILY_TIMING).faults);
  });

  it("cycles the primary shape with the seed, and meets every shape with and without the trickle within 16 seeds", () => {
    const draws = seeds(1, 16);
    draws.forEach((d, i) => expect(d.faults[0]!.shape).toBe(FAMILY_SHAPES[i % FAMILY_SHAPES.length]));
    for (const shape of FAMILY_SHAPES) {
      expect(draws.filter((d) => d.faults[0]!.shape === shape).map((d) => d.trickle).sort()).toEqual([false, true]);
    }
  });

  it("over seeds 1-20, every shape appears at least three times, one to three faults a seed, none twice in a seed", () => {
    const draws = seeds(1, 20);
    const count = (shape: FamilyShape) => draws.flatMap((d) => d.faults).filter((f) => f.shape === shape).length;
    for (const shape of FAMILY_SHAPES) expect(count(shape), shape).toBeGreaterThanOrEqual(3);
    for (const d of draws) {
      expect(d.faults.length).toBeGreaterThanOrEqual(1);
      expect(d.faults.length).toBeLessThanOrEqual(1 + FAULT_FAMILY.extraFaultProbabilities.length - 1);
      expect(new Set(d.faults.map((f) => f.shape)).size).toBe(d.faults.length);
    }
    // Some seeds draw overlapping faults, some a single one.
    expect(draws.some((d) => d.faults.length === 1)).toBe(true);
    expect(draws.some((d) => d.faults.length === 3)).toBe(true);
  });

  it("keeps every fault within the timing and its parameters within their ranges", () => {
    const t = FULL_FAMILY_TIMING;
    for (const f of seeds(1, 200).flatMap((d) => d.faults)) {
      expect(f.endInMs - f.startInMs).toBeGreaterThanOrEqual(t.lengthInMs.min);
      expect(f.endInMs - f.startInMs).toBeLessThanOrEqual(t.lengthInMs.max);
      expect(f.startInMs).toBeGreaterThanOrEqual(t.earliestStartInMs);
      expect(f.endInMs).toBeLessThanOrEqual(t.latestEndInMs);
      if (f.shape === "throttle-share") expect(f.share).toSatisfy((v: number) => v >= 0.3 && v <= 0.9);
      if (f.shape === "throttle-rate") expect(f.ratePerSecond).toSatisfy((v: number) => v >= 40 && v <= 150);
      if (f.shape === "partitions-offline" || f.shape === "partitions-timing-out") {
        expect(f.partitions!.length).toBeGreaterThanOrEqual(1);
        expect(f.partitions!.length).toBeLessThanOrEqual(2);
        expect(new Set(f.partitions).size).toBe(f.partitions!.length);
        for (const p of f.partitions!) expect(Number(p.slice(1))).toBeLessThan(PARTITIONS);
      } else expect(f.partitions).toBeUndefined();
      if (f.shape === "partitions-timing-out") expect(f.delayInMs).toSatisfy((v: number) => v >= t.timeoutDelayInMs.min && v <= t.timeoutDelayInMs.max);
    }
  });
});

describe("familyRules", () => {
  const all: FamilyDraw = {
    seed: 1,
    trickle: true,
    faults: FAMILY_SHAPES.map((shape, i): FamilyFault => ({
      id: `f${i + 1}`,
      shape,
      startInMs: 1_000,
      endInMs: 4_000,
      ...(shape.startsWith("partitions") ? { partitions: ["p3", "p7"] } : {}),
      ...(shape === "throttle-share" ? { share: 0.5 } : {}),
      ...(shape === "throttle-rate" ? { ratePerSecond: 100 } : {}),
      ...(shape === "partitions-timing-out" ? { delayInMs: 1_000 } : {}),
    })),
  };

  it("names each rule after its fault, in draw order (the primary fault answers first where faults overlap)", () => {
    expect(familyRules(all).map((r) => `${r.name} ${r.kind}`)).toEqual([
      "f1 serverBusy",
      "f2 serverBusy",
      "f3 throttle",
      "f4 serverBusy",
      "f5 operationTimedOut",
      "f6 freeze",
      "f7 refuseConnections",
      "f8 resetBeforeForward",
    ]);
    const reversed = familyRules({ ...all, faults: [...all.faults].reverse() }).map((r) => r.name);
    expect(reversed).toEqual(["f8", "f7", "f6", "f5", "f4", "f3", "f2", "f1"]);
    const rate = familyRules(all).find((r) => r.name === "f3")!;
    expect([rate.ratePerSecond, rate.rateScope]).toEqual([100, "account"]);
    expect(familyRules(all).find((r) => r.name === "f2")!.probability).toBe(0.5);
  });

  it("matches no trickle partition; the partitions' rules only their own partitions", () => {
    for (const rule of familyRules(all)) {
      if (rule.kind === "refuseConnections") {
        // Acts on connections: it cannot spare the trickle, and takes no match.
        expect(rule.match).toBeUndefined();
        continue;
      }
      for (const trickle of ["t200", "t403", "t404", "t409", "t501", "warm"]) expect(matchesRule(rule.match!, request(trickle)), `${rule.name} ${trickle}`).toBe(false);
      const partitions = rule.name === "f4" || rule.name === "f5" ? ["p3", "p7"] : ["p0", "p3", "p7", "p9"];
      for (const p of partitions) expect(matchesRule(rule.match!, request(p)), `${rule.name} ${p}`).toBe(true);
      if (rule.name === "f4" || rule.name === "f5") for (const p of ["p0", "p33", "p7x"]) expect(matchesRule(rule.match!, request(p)), `${rule.name} ${p}`).toBe(false);
    }
  });
});

describe("attemptsBound", () => {
  const fault = (shape: FamilyShape, lengthInMs: number, partitions?: string[]): FamilyFault => ({ id: "f1", shape, startInMs: 1_000, endInMs: 1_000 + lengthInMs, ...(partitions ? { partitions } : {}) });

  it("is issue 36's bound at its own shapes: 200 into a 3-s account throttle, 150 into a 3-s refusal or resets, 40 into comeBack's rebalancing pair", () => {
    for (const shape of ["throttle-all", "throttle-share", "throttle-rate"] as const) expect(attemptsBound(fault(shape, 3_000), 200, 10)).toBe(200);
    expect(attemptsBound(fault("refused", 3_000), 200, 10)).toBe(150);
    expect(attemptsBound(fault("resetting", 3_000), 200, 10)).toBe(150);
    const offline = attemptsBound(fault("partitions-offline", 4_000, ["p0"]), 200, 10)!;
    const timingOut = attemptsBound(fault("partitions-timing-out", 2_500, ["p1"]), 200, 10)!;
    expect(offline + timingOut).toBe(40);
  });

  it("scales with the fault's length and scope, and is undefined for a frozen endpoint", () => {
    expect(attemptsBound(fault("throttle-all", 1_500), 200, 10)).toBe(100);
    expect(attemptsBound(fault("partitions-offline", 4_000, ["p0", "p5"]), 200, 10)).toBe(Math.round((2 * 80 * 40) / 130));
    expect(attemptsBound(fault("frozen", 3_000), 200, 10)).toBeUndefined();
  });
});

describe("pastTheEnd", () => {
  const throttle: FamilyFault = { id: "f1", shape: "throttle-all", startInMs: 1_000, endInMs: 3_000 };
  const offline: FamilyFault = { id: "f2", shape: "partitions-offline", startInMs: 3_500, endInMs: 5_000, partitions: ["p3"] };

  it("counts only operations that arrived in a fault of their partition's scope", () => {
    expect(pastTheEnd([throttle], 10, "p0", 999, 1_200)).toBeUndefined();
    expect(pastTheEnd([throttle], 10, "p0", 3_000, 3_200)).toBeUndefined();
    expect(pastTheEnd([offline], 10, "p0", 4_000, 4_100)).toBeUndefined();
  });

  it("measures from the end of the last fault in scope met while pending, clamped at 0", () => {
    expect(pastTheEnd([throttle, offline], 10, "p0", 2_000, 3_400)).toEqual({ pastInMs: 400, arrivedIn: ["f1"] });
    expect(pastTheEnd([throttle, offline], 10, "p0", 2_000, 2_500)).toEqual({ pastInMs: 0, arrivedIn: ["f1"] });
    // p3 still pending when its partition went offline: measured from the second fault's end.
    expect(pastTheEnd([throttle, offline], 10, "p3", 2_000, 5_300)).toEqual({ pastInMs: 300, arrivedIn: ["f1"] });
    // On p0 the offline partition is out of scope: the throttle's end counts.
    expect(pastTheEnd([throttle, offline], 10, "p0", 2_000, 5_300)).toEqual({ pastInMs: 2_300, arrivedIn: ["f1"] });
    // Arrived in two overlapping faults: counted for both.
    const share: FamilyFault = { id: "f3", shape: "throttle-share", startInMs: 2_500, endInMs: 3_600, share: 0.5 };
    expect(pastTheEnd([throttle, share], 10, "p0", 2_700, 3_700)).toEqual({ pastInMs: 100, arrivedIn: ["f1", "f3"] });
  });
});
