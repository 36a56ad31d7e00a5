import { describe, expect, it } from "vitest";
import type { OperationResult } from "../../../tools/demo/operationResult.js";
import { failureCauses, tabulateRun } from "../../../tools/demo/runStats.js";
import { storedKey, verifyWrites } from "../../../tools/demo/verifyWrites.js";
import { emptyWireCounts, READ_BACK_REQUEST_ID_SUFFIX, WireTally } from "../../../tools/demo/wireTally.js";
import { READ_BACK_REQUEST_ID_SUFFIX as LIBRARY_SUFFIX } from "../../../src/ambiguousWrites/ambiguousWriteReadBack.js";
import type { RequestRecord } from "azure-storage-resilience/testing";

let nextId = 0;
function result(partition: string, overrides: Partial<OperationResult> = {}): OperationResult {
  return { id: nextId++, partition, kind: "insert", rowKeys: [`r${nextId}`], startedAtInMs: 0, latencyInMs: 10, outcome: "success", ...overrides };
}

function record(partition: string | undefined, overrides: Partial<RequestRecord> = {}): RequestRecord {
  const scope = { service: "table" as const, account: "devstoreaccount1", resource: "t", ...(partition === undefined ? {} : { partition }) };
  return { time: 0, method: "POST", path: "/", scope, forwarded: true, status: 204, ...overrides };
}

describe("WireTally", () => {
  it("knows a read-back by the suffix the library gives its client request id", () => {
    expect(READ_BACK_REQUEST_ID_SUFFIX).toBe(LIBRARY_SUFFIX);
  });

  it("counts requests, 503s, OperationTimedOut and resets per partition; ignores requests without one", () => {
    const tally = new WireTally();
    tally.add(record("p0"));
    tally.add(record("p0", { status: 503, fault: "throttle", forwarded: false }));
    tally.add(record("p0", { status: 503, fault: "serverBusy", forwarded: false }));
    tally.add(record("p0", { status: 500, fault: "operationTimedOut", forwarded: false }));
    tally.add(record("p0", { status: undefined, fault: "resetAfterForward" }));
    tally.add(record("p1", { status: undefined, fault: "resetBeforeForward", forwarded: false }));
    tally.add(record(undefined));
    expect(tally.of("p0")).toEqual({ requests: 5, retries: 0, readBacks: 0, throttles: 2, timeouts: 1, resets: 1 });
    expect(tally.of("p1")).toEqual({ requests: 1, retries: 0, readBacks: 0, throttles: 0, timeouts: 0, resets: 1 });
    expect(tally.of("p9")).toEqual(emptyWireCounts());
  });

  it("counts a retry for each request repeating an operation's client request id, and never fewer as operations start", () => {
    const tally = new WireTally();
    const shown: number[] = [];
    tally.add(record("p0", { clientRequestId: "op-1", status: 503, fault: "serverBusy", forwarded: false }));
    shown.push(tally.of("p0").retries);
    tally.add(record("p0", { clientRequestId: "op-1", status: 503, fault: "serverBusy", forwarded: false }));
    shown.push(tally.of("p0").retries);
    // op-2 and op-3 start; op-3 waits on the open circuit and sends nothing: no record, no change.
    tally.add(record("p0", { clientRequestId: "op-2" }));
    shown.push(tally.of("p0").retries);
    tally.add(record("p0", { clientRequestId: "op-1" }));
    shown.push(tally.of("p0").retries);
    // A request without an id counts as a first attempt: retries are never invented.
    tally.add(record("p0"));
    shown.push(tally.of("p0").retries);
    expect(shown).toEqual([0, 1, 1, 2, 2]);
    expect(tally.of("p0").requests).toBe(5);
  });

  it("counts a read-back (its id is the write's plus -readback) as a read-back, neither a retry nor an operation's first attempt", () => {
    const tally = new WireTally();
    tally.add(record("p0", { clientRequestId: "op-1", status: undefined, fault: "resetAfterForward" }));
    tally.add(record("p0", { clientRequestId: "op-1", status: 409 }));
    tally.add(record("p0", { method: "GET", clientRequestId: `op-1${READ_BACK_REQUEST_ID_SUFFIX}`, status: 200 }));
    tally.add(record("p0", { method: "GET", clientRequestId: "op-2", status: 200 }));
    expect(tally.of("p0")).toMatchObject({ requests: 4, retries: 1, readBacks: 1 });
    // What the summary adds up: 2 operations' first attempts + 1 retry + 1 read-back.
    const { requests, retries, readBacks } = tally.of("p0");
    expect(requests - retries - readBacks).toBe(2);
  });
});

describe("tabulateRun", () => {
  it("rows per partition and a total: outcomes from the client, retries and faults from the wire", () => {
    const results = [
      result("p0", { latencyInMs: 5 }),
      result("p0", { latencyInMs: 900, outcome: "failed", status: 503 }),
      result("p0", { latencyInMs: 50_000, outcome: "aborted" }),
      result("p1", { latencyInMs: 7 }),
    ];
    const wire = {
      p0: { requests: 9, retries: 6, readBacks: 1, throttles: 6, timeouts: 0, resets: 1 },
      p1: { requests: 1, retries: 0, readBacks: 0, throttles: 0, timeouts: 0, resets: 0 },
    } as Record<string, ReturnType<typeof emptyWireCounts>>;
    const table = tabulateRun(["p0", "p1"], results, (p) => wire[p] ?? emptyWireCounts(), (p) => (p === "p0" ? 2 : 0));
    expect(table.partitions[0]).toEqual({
      partition: "p0", operations: 3, successes: 1, failures: 1, aborted: 1, requests: 9, retries: 6, readBacks: 1, throttles: 6, timeouts: 0, resets: 1, breakerOpens: 2,
      // Aborted operations are left out of the latencies: they were cut off, not slow.
      p50InMs: 5, p99InMs: 900,
    });
    expect(table.partitions[1]).toMatchObject({ operations: 1, retries: 0, breakerOpens: 0, p50InMs: 7 });
    expect(table.total).toMatchObject({ partition: "total", operations: 4, successes: 2, failures: 1, aborted: 1, requests: 10, retries: 6, readBacks: 1, throttles: 6, resets: 1, breakerOpens: 2 });
  });

  it("has no breaker column values without a breaker; an operation that never reached the service adds no retry", () => {
    const table = tabulateRun(["p0"], [result("p0"), result("p0")], () => ({ requests: 1, retries: 0, readBacks: 0, throttles: 0, timeouts: 0, resets: 0 }), undefined);
    expect(table.partitions[0]).toMatchObject({ requests: 1, retries: 0, breakerOpens: null });
    expect(table.total.breakerOpens).toBeNull();
  });
});

describe("verifyWrites", () => {
  it("counts entities: acknowledged and found, lost, failed but stored, failed and not stored", () => {
    const results = [
      result("p0", { rowKeys: ["a"] }),
      result("p0", { kind: "batch", rowKeys: ["b1", "b2", "b3"] }),
      result("p0", { rowKeys: ["lost"] }),
      result("p1", { rowKeys: ["c"], outcome: "failed", status: 409 }),
      result("p1", { rowKeys: ["d"], outcome: "aborted" }),
      result("p1", { kind: "read", rowKeys: ["seed-01"] }),
    ];
    const stored = new Set(["a", "b1", "b2", "b3"].map((k) => storedKey("p0", k)).concat(storedKey("p1", "c")));
    expect(verifyWrites(results, stored)).toEqual({ acknowledged: 5, found: 4, lost: 1, failedButStored: 1, failedButStoredUnmarked: 1, failedNotStored: 1, lostExamples: ["p0/lost"] });
  });

  it("a key with the right RowKey in another partition is not found", () => {
    expect(verifyWrites([result("p0", { rowKeys: ["x"] })], new Set([storedKey("p1", "x")])).lost).toBe(1);
  });
});

describe("failureCauses", () => {
  it("groups failures by status, code and stop reason, most frequent first", () => {
    const causes = failureCauses([
      result("p0", { outcome: "failed", status: 503, errorCode: "ServerBusy", stopReason: "budget-exhausted" }),
      result("p0", { outcome: "failed", status: 503, errorCode: "ServerBusy", stopReason: "budget-exhausted" }),
      result("p0", { outcome: "failed", errorCode: "ECONNRESET" }),
      result("p0", { outcome: "failed" }),
      result("p0", { outcome: "aborted" }),
      result("p0"),
    ]);
    expect(causes).toEqual([
      { cause: "503 ServerBusy (budget-exhausted)", count: 2 },
      { cause: "ECONNRESET", count: 1 },
      { cause: "error", count: 1 },
    ]);
  });
});
