// A wait of at most SHORT_WAIT_IN_MS (50 ms) is taken whatever the caller policy says
// (decideNext): a bounded caller with no spare slot is not let go of it (operationWaits.ts letGoOf).
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, resilientRetryPolicy } from "../../../src/index.js";
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
    const gate = gateOf({ decision: "send", delayInMs: 20, paced: true });
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), caller: { concurrency: 1 } })
      .sendRequest(request(), next)
      .catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(100);
    expect(await pending).toMatchObject({ status: 200 });
    expect(next).toHaveBeenCalledTimes(1);
  });
});
