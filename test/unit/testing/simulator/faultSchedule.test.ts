import { describe, expect, it } from "vitest";
import type { PartitionScope } from "../../../../src/address/partitionScope.js";
import type { SimulatedRequestInfo } from "../../../../src/testing/simulator/faultRule.js";
import { FaultSchedule } from "../../../../src/testing/simulator/faultSchedule.js";
import { mulberry32 } from "../../../../src/testing/simulator/mulberry32.js";

function request(partition?: string, overrides: Partial<SimulatedRequestInfo> = {}): SimulatedRequestInfo {
  const scope: PartitionScope = { service: "table", account: "devstoreaccount1", resource: "orders" };
  if (partition !== undefined) scope.partition = partition;
  return { method: "POST", path: "/devstoreaccount1/orders", service: "table", scope, headers: {}, body: undefined, ...overrides };
}

/** A schedule on a hand-driven clock. */
function manualSchedule(random: () => number = () => 0) {
  const clock = { now: 1_000 };
  const schedule = new FaultSchedule({ now: () => clock.now, random });
  return { schedule, clock };
}

describe("FaultSchedule", () => {
  it("faults nothing without rules", () => {
    expect(manualSchedule().schedule.select(request("a"))).toBeUndefined();
  });

  it("opens the window startInMs after the rule is added and closes it durationInMs later", () => {
    const { schedule, clock } = manualSchedule();
    schedule.add({ kind: "serverBusy", startInMs: 100, durationInMs: 50 });
    const at = (ms: number) => {
      clock.now = 1_000 + ms;
      return schedule.select(request("a"))?.kind;
    };
    expect(at(99)).toBeUndefined();
    expect(at(100)).toBe("serverBusy");
    expect(at(149)).toBe("serverBusy");
    expect(at(150)).toBeUndefined();
    expect(schedule.size).toBe(0);
  });

  it("faults at most count requests", () => {
    const { schedule } = manualSchedule();
    schedule.add({ kind: "operationTimedOut", count: 2 });
    const kinds = Array.from({ length: 4 }, () => schedule.select(request("a"))?.kind);
    expect(kinds).toEqual(["operationTimedOut", "operationTimedOut", undefined, undefined]);
  });

  it("does not spend count on requests that do not match", () => {
    const { schedule } = manualSchedule();
    schedule.add({ kind: "serverBusy", count: 1, match: { partition: "hot" } });
    expect(schedule.select(request("cold"))).toBeUndefined();
    expect(schedule.select(request("hot"))?.kind).toBe("serverBusy");
    expect(schedule.select(request("hot"))).toBeUndefined();
  });

  it("tries rules in the order they were added", () => {
    const { schedule } = manualSchedule();
    schedule.add({ name: "first", kind: "slow", count: 1 });
    schedule.add({ name: "second", kind: "serverBusy" });
    expect(schedule.select(request("a"))?.name).toBe("first");
    expect(schedule.select(request("a"))?.name).toBe("second");
  });

  it("matches service, resource, partition (string or RegExp), method and predicate", () => {
    const { schedule } = manualSchedule();
    schedule.add({ name: "regexp", kind: "serverBusy", match: { partition: /^user-\d+$/g } });
    schedule.add({ name: "resource", kind: "serverBusy", match: { resource: "audit" } });
    schedule.add({ name: "method", kind: "serverBusy", match: { method: "delete" } });
    schedule.add({ name: "service", kind: "serverBusy", match: { service: "queue" } });
    schedule.add({ name: "predicate", kind: "serverBusy", match: { predicate: (r) => r.path.includes("$batch") } });
    const name = (info: SimulatedRequestInfo) => schedule.select(info)?.name;
    // A global RegExp keeps lastIndex; the schedule must reset it, or every other test would fail.
    expect([name(request("user-1")), name(request("user-2")), name(request("user-3"))]).toEqual(["regexp", "regexp", "regexp"]);
    expect(name(request("admin"))).toBeUndefined();
    expect(name(request(undefined))).toBeUndefined();
    expect(name(request("x", { scope: { service: "table", account: "a", resource: "audit" } }))).toBe("resource");
    expect(name(request("x", { method: "DELETE" }))).toBe("method");
    expect(name(request(undefined, { service: "queue", scope: { service: "queue", account: "a", resource: "jobs" } }))).toBe("service");
    expect(name(request(undefined, { path: "/devstoreaccount1/$batch" }))).toBe("predicate");
  });

  it("never matches a partition rule to a request without a partition or without a scope", () => {
    const { schedule } = manualSchedule();
    schedule.add({ kind: "serverBusy", match: { partition: "" } });
    expect(schedule.select(request(undefined))).toBeUndefined();
    expect(schedule.select(request(undefined, { scope: undefined }))).toBeUndefined();
    expect(schedule.select(request(""))?.kind).toBe("serverBusy");
  });

  it("draws probability from the generator, reproducibly for a seed", () => {
    const run = (seed: number) => {
      const { schedule } = manualSchedule(mulberry32(seed));
      schedule.add({ kind: "serverBusy", probability: 0.3 });
      return Array.from({ length: 2_000 }, () => schedule.select(request("a")) !== undefined);
    };
    const a = run(11);
    expect(run(11)).toEqual(a);
    expect(run(12)).not.toEqual(a);
    const rate = a.filter(Boolean).length / a.length;
    expect(rate).toBeGreaterThan(0.25);
    expect(rate).toBeLessThan(0.35);
  });

  it("falls through to the next rule when the draw fails, and draws only for matching rules", () => {
    let draws = 0;
    const { schedule } = manualSchedule(() => {
      draws++;
      return 0.9;
    });
    schedule.add({ name: "unlikely", kind: "serverBusy", probability: 0.5, match: { partition: "a" } });
    schedule.add({ name: "certain", kind: "slow" });
    expect(schedule.select(request("b"))?.name).toBe("certain");
    expect(draws).toBe(0);
    expect(schedule.select(request("a"))?.name).toBe("certain");
    expect(draws).toBe(1);
  });

  it("removes one rule with its remover and all with clear()", () => {
    const { schedule } = manualSchedule();
    const remove = schedule.add({ name: "a", kind: "serverBusy" });
    schedule.add({ name: "b", kind: "slow" });
    remove();
    remove();
    expect(schedule.select(request("x"))?.name).toBe("b");
    schedule.clear();
    expect(schedule.select(request("x"))).toBeUndefined();
  });

  it("copies the rule, so later edits by the caller change nothing", () => {
    const { schedule } = manualSchedule();
    const rule = { kind: "serverBusy" as const, match: { partition: "a" } };
    schedule.add(rule);
    rule.match.partition = "b";
    expect(schedule.select(request("a"))?.kind).toBe("serverBusy");
  });
});
