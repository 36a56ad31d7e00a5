// A wait of at most SHORT_WAIT_IN_MS (50 ms) is taken whatever the caller policy says
// (decideNext): a bounded caller with no spare slot is not let go of it (operationWaits.ts letGoOf).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createPipelineRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, resilientRetryPolicy } from "../../../src/index.js";
import { asGateOption, gateOf, scripted, waitOf } from "../../support/scriptedGate.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";
const request = () => createPipelineRequest({ url, method: "GET" });

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a bounded caller's short waits", () => {
  it("a 20 ms backoff is slept even with no spare slot (concurrency 1): the retry succeeds", async () => {
    const next = scripted(503, 200);
    const pending = resilientRetryPolicy({ caller: { concurrency: 1 }, retry: fixedBackoff({ maxRetries: 3, delayInMs: 20 }) }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(100);
    const response = await pending;
    expect(getRetryInfo(response)?.stopReason).toBe("success");
    expect(response.status).toBe(200);
  });

  it("a paced slot 20 ms away is taken even with no spare slot (concurrency 1): the attempt is sent", async () => {
    const next = scripted(200);
    const gate = gateOf(waitOf("pacing", 20));
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), caller: { concurrency: 1 } })
      .sendRequest(request(), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(await pending).toMatchObject({ status: 200 });
    expect(next).toHaveBeenCalledTimes(1);
  });
});
