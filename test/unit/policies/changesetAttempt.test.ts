import { readFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, resilientRetryPolicy, type AttemptEvent, type RetryEvent } from "../../../src/index.js";
import { changesetErrorResponse } from "../../../src/testing/simulator/changesetErrorResponse.js";

// Issue 18 item 1: an entity group transaction answered 202 whose changeset failed is
// classified by the changeset's status and code, as if they were the answer's.

const account = "http://127.0.0.1:10002/devstoreaccount1";
const conflictBody = readFileSync(new URL("../../fixtures/batchResponses/azuriteTransactionConflict.txt", import.meta.url), "utf8");
const succeededBody = readFileSync(new URL("../../fixtures/batchResponses/azuriteTransactionSucceeded.txt", import.meta.url), "utf8");

function batch(): PipelineRequest {
  return createPipelineRequest({ url: `${account}/$batch`, method: "POST", body: "--batch_a\r\n" });
}

function multipart(req: PipelineRequest, body: string, status = 202): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders({ "content-type": "multipart/mixed; boundary=batchresponse_x" }), bodyAsText: body };
}

function busy(req: PipelineRequest, changesetHeaders: Record<string, string> = {}, status = 503, code = "ServerBusy"): PipelineResponse {
  const answer = changesetErrorResponse({ status, code, changesetHeaders });
  return { request: req, status: answer.status, headers: createHttpHeaders(answer.headers), bodyAsText: answer.body };
}

function recorder() {
  const attempts: AttemptEvent[] = [];
  const retries: RetryEvent[] = [];
  return { attempts, retries, observer: { onAttempt: (e: AttemptEvent) => attempts.push(e), onRetry: (e: RetryEvent) => retries.push(e) } };
}

function policy(observer = recorder().observer, maxRetries = 3) {
  // A fixed backoff caps server hints at its own delay unless told otherwise.
  return resilientRetryPolicy({ retry: fixedBackoff({ maxRetries, delayInMs: 40 }), maxRetryAfterInMs: 5000, service: "table", observers: [observer] });
}

async function settle(pending: Promise<PipelineResponse>): Promise<PipelineResponse> {
  await vi.advanceTimersByTimeAsync(10_000);
  return pending;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a $batch answered 202 whose changeset failed", () => {
  it("503 ServerBusy inside: the whole batch is sent again, after the changeset's own x-ms-retry-after-ms", async () => {
    const { attempts, retries, observer } = recorder();
    const next = vi.fn<SendRequest>()
      .mockImplementationOnce(async (req) => busy(req, { "x-ms-retry-after-ms": "700" }))
      .mockImplementationOnce(async (req) => multipart(req, succeededBody));
    const response = await settle(policy(observer).sendRequest(batch(), next));
    expect(next).toHaveBeenCalledTimes(2);
    expect(response.bodyAsText).toBe(succeededBody);
    expect(attempts.map((e) => [e.attemptClass, e.status, e.errorCode, e.inChangeset])).toEqual([
      ["throttled", 503, "ServerBusy", true],
      ["success", 202, undefined, undefined],
    ]);
    expect(retries).toMatchObject([{ reason: "throttled", delaySource: "retry-after", delayInMs: 700 }]);
    // A failed changeset applied nothing: not an unknown outcome, so the batch is not marked possibly applied.
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, unknownOutcomes: 0, possiblyApplied: false });
  });

  it("500 OperationTimedOut inside is a timeout, retried, and still not an unknown outcome", async () => {
    const { attempts, observer } = recorder();
    const next = vi.fn<SendRequest>()
      .mockImplementationOnce(async (req) => busy(req, {}, 500, "OperationTimedOut"))
      .mockImplementationOnce(async (req) => multipart(req, succeededBody));
    const response = await settle(policy(observer).sendRequest(batch(), next));
    expect(attempts.map((e) => e.attemptClass)).toEqual(["timeout", "success"]);
    expect(getRetryInfo(response)).toMatchObject({ unknownOutcomes: 0, possiblyApplied: false });
  });

  it("429 inside (Cosmos DB's Table API) is throttled, retried with its Retry-After", async () => {
    const { retries, observer } = recorder();
    const next = vi.fn<SendRequest>()
      .mockImplementationOnce(async (req) => busy(req, { "Retry-After": "2" }, 429, "TooManyRequests"))
      .mockImplementationOnce(async (req) => multipart(req, succeededBody));
    await settle(policy(observer).sendRequest(batch(), next));
    expect(retries).toMatchObject([{ reason: "throttled", status: 429, errorCode: "TooManyRequests", delaySource: "retry-after", delayInMs: 2000 }]);
  });

  it("a changeset that keeps failing: retries run out and the caller gets the last 202 (the SDK throws on it)", async () => {
    const next = vi.fn<SendRequest>(async (req) => busy(req));
    const response = await settle(policy(undefined, 2).sendRequest(batch(), next));
    expect(next).toHaveBeenCalledTimes(3);
    expect(response.status).toBe(202);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, stopReason: "retries-exhausted", classes: ["throttled", "throttled", "throttled"] });
  });

  it("409 EntityAlreadyExists inside (Azurite's real answer) is permanent: never retried, the 202 returned as it came", async () => {
    const { attempts, observer } = recorder();
    const next = vi.fn<SendRequest>(async (req) => multipart(req, conflictBody));
    const response = await settle(policy(observer).sendRequest(batch(), next));
    expect(next).toHaveBeenCalledTimes(1);
    expect(response.status).toBe(202);
    expect(response.bodyAsText).toBe(conflictBody);
    expect(attempts).toMatchObject([{ attemptClass: "permanent", status: 409, errorCode: "EntityAlreadyExists", inChangeset: true }]);
    expect(getRetryInfo(response)).toMatchObject({ stopReason: "permanent" });
  });

  it("classification rules see the changeset's status and code as if top level", async () => {
    const next = vi.fn<SendRequest>()
      .mockImplementationOnce(async (req) => multipart(req, conflictBody))
      .mockImplementationOnce(async (req) => multipart(req, succeededBody));
    const retrying = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 1, delayInMs: 10 }), service: "table", classification: { retriableErrorCodes: ["EntityAlreadyExists"] } });
    await settle(retrying.sendRequest(batch(), next));
    expect(next).toHaveBeenCalledTimes(2);
    const neverBusy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 1, delayInMs: 10 }), service: "table", classification: { nonRetriableErrorCodes: ["ServerBusy"] } });
    const once = vi.fn<SendRequest>(async (req) => busy(req));
    await settle(neverBusy.sendRequest(batch(), once));
    expect(once).toHaveBeenCalledTimes(1);
  });
});

describe("what is not read as a transaction", () => {
  // Each of these answers carries a failed changeset in its body; none may be taken for one.
  function answer(req: PipelineRequest, status: number, contentType = "multipart/mixed; boundary=b"): PipelineResponse {
    const body = changesetErrorResponse({ status: 503, code: "ServerBusy" }).body;
    return { request: req, status, headers: createHttpHeaders({ "content-type": contentType }), bodyAsText: body };
  }

  it.each([
    ["a 202 to a blob batch (comp=batch: its sub-requests are not atomic)", "http://127.0.0.1:10000/devstoreaccount1/c?restype=container&comp=batch", "POST", "blob"],
    ["a 202 to a blob copy", "http://127.0.0.1:10000/devstoreaccount1/c/b", "PUT", "blob"],
    ["a 202 to a Tables insert", `${account}/orders`, "POST", "table"],
    ["a 202 to a GET of $batch", `${account}/$batch`, "GET", "table"],
  ] as const)("%s: a success, sent once", async (_name, url, method, service) => {
    const req = createPipelineRequest({ url, method, body: method === "GET" ? undefined : "x" });
    const { attempts, observer } = recorder();
    const next = vi.fn<SendRequest>(async () => answer(req, 202));
    const p = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 2, delayInMs: 10 }), service, ambiguousWrites: false, observers: [observer] });
    await settle(p.sendRequest(req, next));
    expect(next).toHaveBeenCalledTimes(1);
    expect(attempts.map((e) => [e.attemptClass, e.status, e.inChangeset])).toEqual([["success", 202, undefined]]);
  });

  it("a $batch answered 200 is a success and one answered 400 is classified by its own status; a 202 that is not multipart is a success", async () => {
    for (const [status, cls, contentType] of [
      [200, "success", undefined],
      [400, "permanent", undefined],
      [202, "success", "text/plain"],
    ] as const) {
      const req = batch();
      const { attempts, observer } = recorder();
      const next = vi.fn<SendRequest>(async () => answer(req, status, contentType));
      await settle(policy(observer).sendRequest(req, next));
      expect(next, String(status)).toHaveBeenCalledTimes(1);
      expect(attempts.map((e) => [e.attemptClass, e.status, e.inChangeset]), String(status)).toEqual([[cls, status, undefined]]);
    }
  });
});
