// A half-open circuit's probe that pacing delays, with the real breaker: confirming its paced slot
// must not ask the circuit again (the probe out would refuse its own holder, and no probe would
// go for a reset period), and a paced wait that ends without sending gives the probe back.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type SendRequest } from "@azure/core-rest-pipeline";
import { createPartitionBreaker, type PartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { entityAddressOf as addr, entityUrlOf as urlOf, SCOPE_P as P, sent, openOwnCircuitThenThrottleAccount } from "../../support/throttleAccount.js";
import { getRetryInfo, resilientRetryPolicy } from "../../../src/index.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * Partition p's circuit opened on its own, then an account throttled as a whole (four other
 * partitions answering 503 ServerBusy for a second): the account is paced. Then p's reset period
 * passes, and other partitions take `healthyAsks` account slots (each about 40 ms), so p's probe's
 * slot comes after them.
 */
function throttledAccountWithHalfOpenP(healthyAsks = 3): PartitionBreaker {
  const breaker = createPartitionBreaker({ service: "table" });
  openOwnCircuitThenThrottleAccount(breaker, addr("p"), ["a", "b", "c", "d"].map(addr));
  expect(breaker.stateOf(P)).not.toBe("closed");
  expect(breaker.pacedScopes().some((s) => s.level === "account")).toBe(true);
  vi.advanceTimersByTime(3_000);
  // Partitions that never failed: plain attempts taking account slots (a, b and c would take the account's probe).
  for (const a of ["x", "y", "z"].slice(0, healthyAsks).map(addr)) breaker.admit(a, 30_000);
  expect(breaker.stateOf(P)).toBe("half_open");
  return breaker;
}

const ok: SendRequest = async (req: PipelineRequest) => ({ request: req, status: 200, headers: createHttpHeaders({}) });

describe("a paced probe in the retry loop", () => {
  it("open loop: the operation that took the probe is not refused by its own probe when its paced slot comes", async () => {
    const breaker = throttledAccountWithHalfOpenP();
    const next = vi.fn(ok);
    const pending = resilientRetryPolicy({ gate: breaker, random: () => 0 }).sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), next);
    await vi.advanceTimersByTimeAsync(10_000);
    const response = await pending;
    expect(response.status).toBe(200);
    // The account queue was ~120 ms: the probe should go out then, not after circuit waits.
    expect(getRetryInfo(response)?.classes).toEqual(["success"]);
  });

  it("failFast: the probe's holder (a paced slot under 50 ms) is sent, not failed with CIRCUIT_OPEN", async () => {
    // One slot ahead of p's: its slot is about 40 ms away, which a failFast caller takes.
    const breaker = throttledAccountWithHalfOpenP(1);
    const next = vi.fn(ok);
    const pending = resilientRetryPolicy({ gate: breaker, caller: { failFast: true } })
      .sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET" }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    const outcome = await pending;
    expect(outcome).toMatchObject({ status: 200 });
    expect(next).toHaveBeenCalledTimes(1);
  });

  it("failFast: the partition is not left refusing with nothing sent for a reset period", async () => {
    const breaker = throttledAccountWithHalfOpenP(1);
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

describe("a paced wait that does not send gives the probe back", () => {
  it("open loop: aborted while its paced slot comes, the probe's holder gives the probe back at once", async () => {
    const breaker = throttledAccountWithHalfOpenP();
    const controller = new AbortController();
    const next = vi.fn(ok);
    const pending = resilientRetryPolicy({ gate: breaker })
      .sendRequest(createPipelineRequest({ url: urlOf("p"), method: "GET", abortSignal: controller.signal }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1);
    expect(breaker.statusOf(P).available).toBe(false);
    controller.abort();
    expect(await pending).toMatchObject({ name: "AbortError" });
    expect(next).not.toHaveBeenCalled();
    expect(breaker.statusOf(P).available).toBe(true);
  });

  it("abandon(): the paced probe's admission gives the probe back; the next attempt is the probe", () => {
    const breaker = throttledAccountWithHalfOpenP();
    const probe = sent(breaker.admit(addr("p"), 30_000));
    expect(probe.delayInMs).toBeGreaterThan(0);
    expect(breaker.admit(addr("p"), 30_000)).toMatchObject({ decision: "refuse", reason: "circuit-open", probeOut: true });
    breaker.abandon(addr("p"), probe);
    expect(breaker.statusOf(P).available).toBe(true);
    expect(breaker.admit(addr("p"), 30_000).decision).toBe("send");
    expect(breaker.statusOf(P).available).toBe(false);
  });

  it("abandon(): an unpaced probe's admission gives it back too", () => {
    const breaker = createPartitionBreaker({ service: "table", pacing: false });
    openP(breaker);
    vi.advanceTimersByTime(3_000);
    const probe = sent(breaker.admit(addr("p"), 30_000));
    expect(probe.delayInMs).toBe(0);
    expect(breaker.statusOf(P).available).toBe(false);
    breaker.abandon(addr("p"), probe);
    expect(breaker.statusOf(P).available).toBe(true);
  });

  it("abandon(): an admission that holds no probe changes nothing", () => {
    const breaker = createPartitionBreaker({ service: "table", pacing: false });
    openP(breaker);
    vi.advanceTimersByTime(3_000);
    const other = sent(breaker.admit(addr("a"), 30_000));
    sent(breaker.admit(addr("p"), 30_000));
    breaker.abandon(addr("p"), other);
    expect(breaker.statusOf(P).available).toBe(false);
  });

  it("abandon(): a holder that outlasted the reset period does not give back the probe that replaced its own", () => {
    const breaker = createPartitionBreaker({ service: "table", pacing: false });
    openP(breaker);
    vi.advanceTimersByTime(3_000);
    const stale = sent(breaker.admit(addr("p"), 30_000));
    vi.advanceTimersByTime(3_000);
    sent(breaker.admit(addr("p"), 30_000));
    breaker.abandon(addr("p"), stale);
    expect(breaker.statusOf(P).available).toBe(false);
  });
});

/** Opens p's circuit with six timeouts (no pacing involved). */
function openP(breaker: PartitionBreaker): void {
  for (let i = 0; i < 6; i++) {
    const admission = breaker.admit(addr("p"), 30_000);
    if (admission.decision === "send") breaker.record(addr("p"), admission, { outcomeClass: "timeout", status: 500, errorCode: "OperationTimedOut" });
    vi.advanceTimersByTime(60);
  }
  expect(breaker.stateOf(P)).toBe("open");
}
