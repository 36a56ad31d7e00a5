import { describe, expect, it } from "vitest";
import { RequestLog, type RequestRecord } from "../../../../src/testing/simulator/requestLog.js";

function record(overrides: Partial<RequestRecord> = {}): RequestRecord {
  return {
    time: 0,
    method: "GET",
    path: "/devstoreaccount1/t",
    scope: { service: "table", account: "devstoreaccount1", resource: "t", partition: "a" },
    forwarded: true,
    status: 200,
    ...overrides,
  };
}

describe("RequestLog", () => {
  it("keeps the newest maxRecords records and counts the rest in the totals", () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 5; i++) log.add(record({ time: i, fault: i % 2 === 0 ? "serverBusy" : undefined }));
    expect(log.records.map((r) => r.time)).toEqual([2, 3, 4]);
    expect(log.totals).toEqual({ requests: 5, forwarded: 0, faults: { serverBusy: 3 }, dropped: 2 });
  });

  it("counts by flat scope fields, record fields and predicates", () => {
    const log = new RequestLog(100);
    log.add(record());
    log.add(record({ method: "POST", fault: "serverBusy", forwarded: false, status: 503, ruleName: "r" }));
    log.add(record({ scope: { service: "table", account: "devstoreaccount1", resource: "t" } }));
    log.add(record({ scope: undefined }));
    expect(log.count()).toBe(4);
    expect(log.count({ partition: "a" })).toBe(2);
    expect(log.count({ partition: undefined })).toBe(2);
    expect(log.count({ fault: undefined })).toBe(3);
    expect(log.count({ fault: "serverBusy", status: 503, method: "post", ruleName: "r" })).toBe(1);
    expect(log.count({ resource: "t", forwarded: true })).toBe(2);
    expect(log.count((r) => r.method === "GET")).toBe(3);
  });

  it("resets records and totals", () => {
    const log = new RequestLog(10);
    log.add(record());
    log.countForwarded();
    log.reset();
    expect(log.records).toEqual([]);
    expect(log.totals).toEqual({ requests: 0, forwarded: 0, faults: {}, dropped: 0 });
  });

  it("hands out totals as a snapshot", () => {
    const log = new RequestLog(10);
    const before = log.totals;
    log.add(record({ fault: "slow" }));
    expect(before.requests).toBe(0);
    expect(before.faults).toEqual({});
  });
});
