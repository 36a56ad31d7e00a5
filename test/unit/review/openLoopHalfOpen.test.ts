// Review of issue 23's core promise for the open loop ("never fails an operation for a local
// reason when waiting within the deadline would let it succeed"). While a half-open circuit's
// probe is out, the breaker answers retryAfterInMs = halfOpenPollInMs (reset / 10 = 300 ms by
// default): a poll interval, not the time the circuit may admit. decideNext.ts:127 fails an
// operation whose remaining time is below it at once, though the probe may close the circuit
// within its round trip.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createPartitionBreaker } from "../../../src/breaker/partitionBreaker.js";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { resilientRetryPolicy } from "../../../src/index.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p',RowKey='r')";
const P = "table|acct|orders|p";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("review: open loop and a half-open circuit's probe (FAILS on main)", () => {
  it("an operation with 250 ms left waits for the probe out (answered in 20 ms) instead of failing CIRCUIT_OPEN at once", async () => {
    const breaker = createPartitionBreaker({ service: "table", pacing: false });
    const address = readRequestAddress(createPipelineRequest({ url, method: "GET" }), "table");
    for (let i = 0; i < 6; i++) {
      const admission = breaker.admit(address, 30_000);
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
});
