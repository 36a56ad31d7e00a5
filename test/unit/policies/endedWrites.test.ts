import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, RestError, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, resilientRetryPolicy } from "../../../src/index.js";
import { isPossiblyApplied } from "../../support/possiblyApplied.js";
import { SEND_NOW, type AttemptGate } from "../../../src/breaker/attemptGate.js";
import { captureAzureLog } from "../../support/captureAzureLog.js";
import { asGateOption, waitOf } from "../../support/scriptedGate.js";

// Issue 17, items 4 and 13: the error a caller catches after an abort still tells that the
// write may have been applied; the give-up warning names the operation and the scope.

const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
const reset = (): RestError => new RestError("socket hang up", { code: "ECONNRESET" });
const busy = (request: PipelineRequest): PipelineResponse => ({ request, status: 503, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) });

function insert(signal?: AbortSignal): PipelineRequest {
  return createPipelineRequest({ url: table, method: "POST", body: JSON.stringify({ PartitionKey: "p", RowKey: "r" }), abortSignal: signal });
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("a write ended by the caller's abort (item 4)", () => {
  it("after a reset, aborted during the backoff: the AbortError the caller catches is marked possibly applied", async () => {
    const controller = new AbortController();
    const next = vi.fn<SendRequest>().mockRejectedValueOnce(reset());
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 1_000 }), service: "table" })
      .sendRequest(insert(controller.signal), next)
      .catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    const error = await pending;
    expect((error as Error).name).toBe("AbortError");
    expect(isPossiblyApplied(error)).toBe(true);
    expect(getRetryInfo(error)).toMatchObject({ stopReason: "aborted", unknownOutcomes: 1, possiblyApplied: true });
    expect(next).toHaveBeenCalledTimes(1);
  });

  it("after a reset, aborted while waiting on an open circuit: marked too", async () => {
    const controller = new AbortController();
    let sent = 0;
    const gate: AttemptGate = {
      admit: () => (sent === 0 ? SEND_NOW : waitOf("circuit", 3_000)),
      record: () => void (sent += 1),
    };
    const next = vi.fn<SendRequest>().mockRejectedValueOnce(reset());
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retry: fixedBackoff({ delayInMs: 10 }), service: "table" })
      .sendRequest(insert(controller.signal), next)
      .catch((error: unknown) => error);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort();
    const error = await pending;
    expect(isPossiblyApplied(error)).toBe(true);
    expect(getRetryInfo(error)?.classes).toEqual(["transient", "circuit_open"]);
  });

  it("an attempt aborted after it was sent is itself an unknown outcome", async () => {
    const controller = new AbortController();
    const next = vi.fn<SendRequest>(async (request) => {
      controller.abort();
      throw new RestError("The operation was aborted.", { code: "ABORT_ERR", request });
    });
    const error = await resilientRetryPolicy({ service: "table" }).sendRequest(insert(controller.signal), next).catch((e: unknown) => e);
    expect(getRetryInfo(error)).toMatchObject({ stopReason: "aborted", unknownOutcomes: 1, possiblyApplied: true });
  });

  it("a read ended by an abort is never marked", async () => {
    const controller = new AbortController();
    const next = vi.fn<SendRequest>().mockRejectedValueOnce(reset());
    const request = createPipelineRequest({ url: `${table}(PartitionKey='p',RowKey='r')`, method: "GET", abortSignal: controller.signal });
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 1_000 }) }).sendRequest(request, next).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(10);
    controller.abort();
    expect(isPossiblyApplied(await pending)).toBe(false);
  });
});

describe("the give-up warning (item 13)", () => {
  it("names the operation and the partition scope", async () => {
    const log = captureAzureLog("warning");
    try {
      const next = vi.fn<SendRequest>(async (request) => busy(request));
      const request = createPipelineRequest({ url: `${table}(PartitionKey='p1',RowKey='r1')`, method: "GET" });
      const pending = resilientRetryPolicy({ retry: fixedBackoff({ delayInMs: 10, maxRetries: 2 }), service: "table", retryBudget: false }).sendRequest(request, next);
      await vi.advanceTimersByTimeAsync(100);
      await pending;
      const line = log.lines.find((l) => l.includes("Gave up"));
      expect(line).toContain("get_entity");
      expect(line).toContain("table|devstoreaccount1|orders|p1");
      expect(line).toContain("retries-exhausted");
    } finally {
      log.stop();
    }
  });
});
