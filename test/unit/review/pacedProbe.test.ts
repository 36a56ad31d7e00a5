// Review of issue 23's loop with the real breaker: a half-open circuit's probe that the account's
// pacing delays is refused by its own probe when the loop confirms the paced slot
// (partitionBreaker.ts admit: circuit.admit runs again on `reserved`, and the probe it took at
// the first ask is still out). No probe goes out for a whole reset period.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type SendRequest } from "@azure/core-rest-pipeline";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { getRetryInfo, resilientRetryPolicy } from "../../../src/index.js";

const urlOf = (pk: string) => `https://acct.table.core.windows.net/orders(PartitionKey='${pk}',RowKey='r')`;
const addr = (pk: string) => readRequestAddress(createPipelineRequest({ url: urlOf(pk), method: "GET" }), "table");
const P = "table|acct|orders|p";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * An account throttled as a whole (four partitions answering 503 ServerBusy for a second): the
 * account is paced, and partition p's circuit opened. Then its reset period passes, and the
 * healthy partitions keep taking account slots, so the account's queue is a few ms long.
 */
function throttledAccountWithHalfOpenP(): PartitionBreaker {
  const breaker = createPartitionBreaker({ service: "table" });
  const parts = ["a", "b", "c", "p"].map(addr);
  const throttled = { outcomeClass: "throttled" as const, status: 503, errorCode: "ServerBusy" };
  for (let i = 0; i < 40; i++) {
    for (const a of parts) {
      const admission = breaker.admit(a, 30_000);
      if (admission.decision === "send") breaker.record(a, admission, throttled);
    }
    vi.advanceTimersByTime(25);
  }
  expect(breaker.stateOf(P)).toBe("open");
  expect(breaker.pacedScopes().some((s) => s.level === "account")).toBe(true);
  vi.advanceTimersByTime(3_000);
  for (const a of parts.slice(0, 3)) breaker.admit(a, 30_000);
  expect(breaker.stateOf(P)).toBe("half_open");
  return breaker;
}

const ok: SendRequest = async (req: PipelineRequest) => ({ request: req, status: 200, headers: createHttpHeaders({}) });

describe("review: a paced probe", () => {
  it("open loop: the operation that took the probe is not refused by its own probe (FAILS on main: it waits a reset period)", async () => {
    const breaker = throttledAccountWithHalfOpenP();
    const next = vi.fn(ok);
    const pending = resilientRetryPolicy({ gate: breaker, random: () => 0 }).sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), next);
    await vi.advanceTimersByTimeAsync(10_000);
    const response = await pending;
    expect(response.status).toBe(200);
    // The account queue was ~27 ms: the probe should go out then, not after circuit waits.
    expect(getRetryInfo(response)?.classes).toEqual(["success"]);
  });

  it("failFast: the probe's holder (a paced slot under 50 ms) is sent, not failed with CIRCUIT_OPEN (FAILS on main)", async () => {
    const breaker = throttledAccountWithHalfOpenP();
    const next = vi.fn(ok);
    const pending = resilientRetryPolicy({ gate: breaker, caller: { failFast: true } })
      .sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 200 });
    expect(next).toHaveBeenCalledTimes(1);
  });

  it("failFast: after that refusal no probe can go for a whole reset period: the partition stays refused with nothing sent (FAILS on main)", async () => {
    const breaker = throttledAccountWithHalfOpenP();
    const policy = resilientRetryPolicy({ gate: breaker, caller: { failFast: true } });
    const next = vi.fn(ok);
    const first = policy.sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), next).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    await first;
    // 2.5 s later, well before the stale probe expires, the partition still refuses.
    await vi.advanceTimersByTimeAsync(2_500);
    expect(breaker.statusOf(P).available).toBe(true);
  });
});
