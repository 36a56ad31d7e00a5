import { describe, expect, it } from "vitest";
import { faultRules, OPERATION_TIMEOUT_DELAY_IN_MS, planFaults, RESET_PROBABILITY } from "../../../tools/demo/faultPlan.js";
import { matchesRule, type SimulatedRequestInfo } from "../../../src/testing/simulator/faultRule.js";

const partitions = ["p0", "p1", "p2", "p3"];

function request(partition: string | undefined, body?: string, path = "/devstoreaccount1/demo"): SimulatedRequestInfo {
  return {
    method: "POST",
    path,
    service: "table",
    scope: partition === undefined ? { service: "table", account: "devstoreaccount1", resource: "demo" } : { service: "table", account: "devstoreaccount1", resource: "demo", partition },
    headers: {},
    body,
  };
}

describe("planFaults", () => {
  it("20 s: the hot partition is offline 8-15 s, the next one times out 11-15 s, resets and throttling throughout", () => {
    const faults = planFaults({ durationInMs: 20_000, partitions, throttleTargetPerSecond: 32 });
    expect(faults.map((f) => [f.name, f.partition, f.startInMs, f.endInMs])).toEqual([
      ["offline", "p0", 8_000, 15_000],
      ["timeouts", "p1", 11_000, 15_000],
      ["reset-before", undefined, 0, Infinity],
      ["reset-after", undefined, 0, Infinity],
      ["throttle", undefined, 0, Infinity],
    ]);
    expect(faults[4]!.description).toContain("32 entities/s");
  });

  it("keeps the outage to a few seconds on long runs and at least a second on short ones, inside the run", () => {
    const long = planFaults({ durationInMs: 600_000, partitions, throttleTargetPerSecond: 32 });
    expect(long[0]!.endInMs - long[0]!.startInMs).toBe(8_000);
    const short = planFaults({ durationInMs: 2_000, partitions, throttleTargetPerSecond: 32 });
    expect(short[0]!.endInMs - short[0]!.startInMs).toBe(1_000);
    expect(short[1]!.endInMs).toBeLessThanOrEqual(2_000);
  });

  it("one partition takes every fault", () => {
    const faults = planFaults({ durationInMs: 20_000, partitions: ["p0"], throttleTargetPerSecond: 32 });
    expect(faults[0]!.partition).toBe("p0");
    expect(faults[1]!.partition).toBe("p0");
  });
});

describe("faultRules", () => {
  const faults = planFaults({ durationInMs: 20_000, partitions, throttleTargetPerSecond: 5 });

  it("turns the plan into simulator rules, in order", () => {
    const rules = faultRules(faults, partitions, 5);
    expect(rules.map((r) => [r.name, r.kind, r.startInMs, r.durationInMs])).toEqual([
      ["offline", "serverBusy", 8_000, 7_000],
      ["timeouts", "operationTimedOut", 11_000, 4_000],
      ["reset-before", "resetBeforeForward", 0, undefined],
      ["reset-after", "resetAfterForward", 0, undefined],
      ["throttle", "throttle", 0, undefined],
    ]);
    expect(rules[1]!.delayInMs).toBe(OPERATION_TIMEOUT_DELAY_IN_MS);
    expect(rules[2]!.probability).toBe(RESET_PROBABILITY);
  });

  it("faults only the run's partitions, never table creation or other keys", () => {
    const [offline, , reset] = faultRules(faults, partitions, 5);
    expect(matchesRule(offline!.match!, request("p0"))).toBe(true);
    expect(matchesRule(offline!.match!, request("p1"))).toBe(false);
    expect(matchesRule(reset!.match!, request("p3"))).toBe(true);
    expect(matchesRule(reset!.match!, request("p33"))).toBe(false);
    expect(matchesRule(reset!.match!, request(undefined))).toBe(false);
  });

  it("throttles a partition past its entities/s target, counting a batch's entities, per partition", () => {
    let now = 0;
    {
      const throttle = faultRules(faults, partitions, 5, () => now)[4]!;
      const over = (r: SimulatedRequestInfo) => matchesRule(throttle.match!, r);
      const batch = Array.from({ length: 4 }, (_, i) => `POST http://x/devstoreaccount1/demo HTTP/1.1\r\n\r\n{"RowKey":"${i}"}`).join("\r\n--b\r\n");
      expect(over(request("p0", batch, "/devstoreaccount1/$batch"))).toBe(false); // 4 of 5 tokens
      expect(over(request("p0"))).toBe(false); // the fifth
      expect(over(request("p0"))).toBe(true); // none left
      expect(over(request("p1"))).toBe(false); // its own bucket
      now += 400; // 2 tokens back
      expect(over(request("p0"))).toBe(false);
      expect(over(request("p0"))).toBe(false);
      expect(over(request("p0"))).toBe(true);
      expect(over(request(undefined))).toBe(false);
      // A fresh set of rules starts with full buckets (the baseline run is not handicapped).
      expect(matchesRule(faultRules(faults, partitions, 5, () => now)[4]!.match!, request("p0"))).toBe(false);
    }
  });
});
