import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, RestError, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, isPossiblyApplied, resilientRetryPolicy } from "../../../src/index.js";

// Issue 17 item 3. When a response body breaks off while the Node HTTP client reads it, the
// client throws RestError("Error reading response as text: aborted", { code: "PARSE_ERROR" })
// with no request (@typespec/ts-http-runtime nodeHttpClient.js, streamToText), inside the
// retry policy's `next`. An answer that is not valid HTTP fails with Node's HPE_* codes.
// Either way the store had the request: an unknown outcome, like a reset after sending.

const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
const cut = (): RestError => new RestError("Error reading response as text: aborted", { code: "PARSE_ERROR" });
const notHttp = (req: PipelineRequest): RestError => new RestError("Parse Error: Expected HTTP/", { code: "HPE_INVALID_CONSTANT", request: req });

function reply(req: PipelineRequest, status: number): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders({}) };
}

function policy(maxRetries = 2) {
  return resilientRetryPolicy({ retry: fixedBackoff({ maxRetries, delayInMs: 10 }), ambiguousWrites: false });
}

function insert(): PipelineRequest {
  return createPipelineRequest({ url: table, method: "POST", body: JSON.stringify({ PartitionKey: "p", RowKey: "r" }) });
}

async function outcome(pending: Promise<PipelineResponse>): Promise<{ response?: PipelineResponse; error?: unknown }> {
  const result = pending.then(
    (response) => ({ response }),
    (error: unknown) => ({ error }),
  );
  await vi.advanceTimersByTimeAsync(1000);
  return result;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("a response that could not be read", () => {
  it("a read whose body was cut is retried", async () => {
    const next = vi.fn<SendRequest>().mockRejectedValueOnce(cut()).mockImplementationOnce(async (req) => reply(req, 200));
    const { response } = await outcome(policy().sendRequest(createPipelineRequest({ url: `${table}(PartitionKey='p',RowKey='r')`, method: "GET" }), next));
    expect(response?.status).toBe(200);
    expect(next).toHaveBeenCalledTimes(2);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, classes: ["transient", "success"], unknownOutcomes: 0 });
  });

  it("an insert whose answer was cut is retried, and counted as an unknown outcome", async () => {
    const next = vi.fn<SendRequest>().mockRejectedValueOnce(cut()).mockImplementationOnce(async (req) => reply(req, 409));
    const { response } = await outcome(policy().sendRequest(insert(), next));
    expect(response?.status).toBe(409);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, unknownOutcomes: 1, possiblyApplied: true });
  });

  it("an insert whose answers are cut until retries run out: the caller's error leads to the record, marked", async () => {
    const next = vi.fn<SendRequest>(async () => {
      throw cut();
    });
    const { error } = await outcome(policy(2).sendRequest(insert(), next));
    expect(error).toMatchObject({ name: "RestError", code: "PARSE_ERROR" });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 3, unknownOutcomes: 3, stopReason: "retries-exhausted", possiblyApplied: true, ambiguousWrite: "unresolved" });
    expect(isPossiblyApplied(error)).toBe(true);
    // The request is attached the way RestError keeps it: not enumerable, so not logged by accident.
    expect(Object.keys(error as object)).not.toContain("request");
  });

  it("an answer that is not valid HTTP (HPE_*) after a write is an unknown outcome, retried", async () => {
    const next = vi.fn<SendRequest>(async (req) => {
      throw notHttp(req);
    });
    const { error } = await outcome(policy(1).sendRequest(insert(), next));
    expect(next).toHaveBeenCalledTimes(2);
    expect(getRetryInfo(error)).toMatchObject({ unknownOutcomes: 2, possiblyApplied: true });
  });

  it("a RestError that already names a request keeps it", async () => {
    const other = createPipelineRequest({ url: table, method: "POST" });
    const next = vi.fn<SendRequest>(async () => {
      throw new RestError("Error reading response as text: aborted", { code: "PARSE_ERROR", request: other });
    });
    const { error } = await outcome(policy(0).sendRequest(insert(), next));
    expect((error as RestError).request).toBe(other);
  });

  it("an insert answered 201 with a JSON body that does not parse is retried as an unknown outcome, and settles on the 409", async () => {
    const garbled = (req: PipelineRequest): PipelineResponse => ({
      request: req,
      status: 201,
      headers: createHttpHeaders({ "content-type": "application/json;odata=minimalmetadata" }),
      bodyAsText: '{"PartitionKey":"p","RowKey"',
    });
    const next = vi.fn<SendRequest>().mockImplementationOnce(async (req) => garbled(req)).mockImplementationOnce(async (req) => reply(req, 409));
    const { response } = await outcome(policy().sendRequest(insert(), next));
    expect(next).toHaveBeenCalledTimes(2);
    expect(getRetryInfo(response)).toMatchObject({ classes: ["transient", "permanent"], unknownOutcomes: 1, possiblyApplied: true });
  });
});
