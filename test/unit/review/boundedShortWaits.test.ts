// Review of issue 23: a wait of at most SHORT_WAIT_IN_MS (50 ms) "is taken whatever the caller
// policy says" (decideNext.ts:79, afterAttempt line 154; askGate asks the gate for slots under
// 50 ms when the caller may not wait). For a bounded caller with no spare slot, sleepFor's letGo
// (operationWaits.ts:263) asks mustRelease before the first slice and lets the waiter go at
// once, and the loop (resilientRetryPolicy.ts:129) then stops it: the short wait is never taken.
// And the retry budget's contract (attemptGate.ts:39-44: a retry sent on a paced admission is
// not counted) is read from the previous attempt (#lastPaced) instead of the admission the retry
// is sent on.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createRetryBudget, fixedBackoff, getRetryInfo, resilientRetryPolicy } from "../../../src/index.js";
import { SEND_NOW, type Admission, type AttemptGate, type SendAdmission } from "../../../src/breaker/attemptGate.js";
import { asGateOption } from "../../support/scriptedGate.js";

const url = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";
const request = () => createPipelineRequest({ url, method: "GET" });
const reply = (req: PipelineRequest, status: number, headers: Record<string, string> = {}): PipelineResponse => ({ request: req, status, headers: createHttpHeaders(headers) });

function scripted(...statuses: number[]) {
  return vi.fn<SendRequest>(async (req) => {
    const status = statuses.shift();
    if (status === undefined) throw new Error("unexpected extra attempt");
    return reply(req, status, status === 503 ? { "x-ms-error-code": "ServerBusy" } : {});
  });
}

/** A gate that answers each first ask from a list (a confirmation gets its reservation back). */
function gateOf(...admissions: Admission[]): AttemptGate {
  return {
    admit: (_address, _remaining, reserved?: SendAdmission) => reserved ?? admissions.shift() ?? SEND_NOW,
    record: () => undefined,
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("review: a bounded caller's short waits (FAIL on main)", () => {
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
    const gate = gateOf({ decision: "send", delayInMs: 20, paced: true });
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), caller: { concurrency: 1 } })
      .sendRequest(request(), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(await pending).toMatchObject({ status: 200 });
    expect(next).toHaveBeenCalledTimes(1);
  });
});

describe("review: the retry budget follows the admission a retry is sent on (FAILS on main)", () => {
  it("a retry sent unpaced after a paced attempt is counted against the budget", async () => {
    const budget = createRetryBudget();
    const next = scripted(503, 200);
    const gate = gateOf({ decision: "send", delayInMs: 0, paced: true }, SEND_NOW);
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retryBudget: budget, retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }) }).sendRequest(request(), next);
    await vi.advanceTimersByTimeAsync(100);
    expect((await pending).status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
    expect(budget.snapshot().retries).toBe(1);
  });
});
