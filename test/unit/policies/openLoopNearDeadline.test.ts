// The open loop's promise (issue 23): it never fails an operation for a local reason when waiting
// within the deadline would let it succeed. While a probe of a partition that serves nothing is out,
// the next probe's time (a probe period, 300 ms by default) is not when the partition may take the
// operation: the probe's answer may bring it back sooner. An empty budget's wait is a poll too. An
// operation with less time left than either asks again within it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createPartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { fixedBackoff, getRetryInfo, resilientRetryPolicy, type RetryBudget } from "../../../src/index.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p',RowKey='r')";
const P = "table|acct|orders|p";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("open loop near its deadline", () => {
  it("an operation with 250 ms left waits for the probe out (answered in 20 ms) instead of failing CIRCUIT_OPEN at once", async () => {
    const breaker = createPartitionBreaker({ service: "table", pacing: false });
    const address = readRequestAddress(createPipelineRequest({ url, method: "GET" }), "table");
    for (let i = 0; i < 6; i++) {
      const admission = breaker.admit(address, { queueForInMs: 30_000, retry: false });
      if (admission.decision === "send") breaker.record(address, admission, { outcomeClass: "timeout", status: 500, errorCode: "OperationTimedOut" });
      vi.advanceTimersByTime(60);
    }
    expect(breaker.stateOf(P)).toBe("open");
    vi.advanceTimersByTime(3_000);
    const answerIn20ms: SendRequest = (req: PipelineRequest) =>
      new Promise<PipelineResponse>((resolve) => setTimeout(() => resolve({ request: req, status: 200, headers: createHttpHeaders({}) }), 20));
    // The probe: an operation of one client.
    const probe = resilientRetryPolicy({ gate: breaker }).sendRequest(createPipelineRequest({ url, method: "GET" }), answerIn20ms);
    // Another, on a client whose deadline is 250 ms (an HTTP handler's budget), right behind it.
    const next = vi.fn(answerIn20ms);
    const pending = resilientRetryPolicy({ gate: breaker, maxElapsedInMs: 250 })
      .sendRequest(createPipelineRequest({ url, method: "GET" }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(300);
    expect((await probe).status).toBe(200);
    expect(breaker.stateOf(P)).toBe("closed");
    expect(await pending).toMatchObject({ status: 200 });
  });

  it("an empty budget that refills 45 ms before the deadline (its jittered poll is 190 ms): the retry is deferred to it, not failed", async () => {
    const refillAt = Date.now() + 205;
    const budget: RetryBudget = {
      recordRequest: () => undefined,
      tryRetry: () => Date.now() >= refillAt,
      snapshot: () => ({ requests: 0, retries: 0, available: 0 }),
      retryAfterInMs: () => (Date.now() >= refillAt ? 0 : 900),
    };
    const statuses = [503, 200];
    const next = vi.fn<SendRequest>(async (req) => ({ request: req, status: statuses.shift() ?? 500, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) }));
    const pending = resilientRetryPolicy({ retryBudget: budget, maxElapsedInMs: 250, random: () => 0.9, retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }) })
      .sendRequest(createPipelineRequest({ url, method: "GET" }), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(300);
    const response = (await pending) as PipelineResponse;
    expect(response.status).toBe(200);
    expect(getRetryInfo(response)?.stopReason).toBe("success");
    expect(next).toHaveBeenCalledTimes(2);
  });
});
