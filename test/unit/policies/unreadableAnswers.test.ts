import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, createPipelineRequest, RestError, type HttpClient, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, installResilience, resilientRetryPolicy } from "../../../src/index.js";
import { isPossiblyApplied } from "../../support/possiblyApplied.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";

// Issue 17 item 3. When a response body breaks off while the Node HTTP client reads it, the
// client throws RestError("Error reading response as text: aborted", { code: "PARSE_ERROR" })
// with no request (@typespec/ts-http-runtime nodeHttpClient.js, streamToText), inside the
// retry policy's `next`. An answer that is not valid HTTP fails with Node's HPE_* codes.
// Either way the store had the request: an unknown outcome, like a reset after sending.

const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
const cut = (): RestError => new RestError("Error reading response as text: aborted", { code: "PARSE_ERROR" });
const notHttp = (req: PipelineRequest): RestError => new RestError("Parse Error: Expected HTTP/", { code: "HPE_INVALID_CONSTANT", request: req });

function reply(req: PipelineRequest, status: number, bodyAsText?: string, headers: Record<string, string> = {}): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders(bodyAsText === undefined ? headers : { "content-type": "application/json;odata=minimalmetadata", ...headers }), bodyAsText };
}

/** A 2xx whose JSON body broke off: the SDK's deserializer cannot parse it. */
function garbled(req: PipelineRequest, status: number): PipelineResponse {
  return reply(req, status, '{"PartitionKey":"p","RowKey"');
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

  it("a read answered 200 with a JSON body that does not parse ends at once, unmarked: the SDK throws on it, nothing to settle", async () => {
    const next = vi.fn<SendRequest>(async (req) => garbled(req, 200));
    const { response } = await outcome(policy().sendRequest(createPipelineRequest({ url: `${table}(PartitionKey='p',RowKey='r')`, method: "GET" }), next));
    expect(next).toHaveBeenCalledTimes(1);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, stopReason: "success", unknownOutcomes: 0, possiblyApplied: false });
  });
});

// Issue 30. A write answered 2xx whose JSON body does not parse: the service says the write
// applied, only its answer is unreadable (the SDK's deserializer, after the retry policy,
// throws PARSE_ERROR on it). It is settled without being sent again: read back where a
// read-back exists, else the 2xx goes back as it came, marked possibly applied.
describe("a write answered 2xx with a body that does not parse", () => {
  it("with read-backs off: sent once, the 2xx returned marked possibly applied", async () => {
    const next = vi.fn<SendRequest>(async (req) => garbled(req, 201));
    const { response } = await outcome(policy().sendRequest(insert(), next));
    expect(next).toHaveBeenCalledTimes(1);
    expect(response?.status).toBe(201);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success", unknownOutcomes: 1, possiblyApplied: true, ambiguousWrite: "unresolved" });
  });

  it("a write no read-back can settle (createTable): sent once, marked not_resolvable", async () => {
    const createTable = createPipelineRequest({ url: "http://127.0.0.1:10002/devstoreaccount1/Tables", method: "POST", body: JSON.stringify({ TableName: "orders" }) });
    const next = vi.fn<SendRequest>(async (req) => garbled(req, 201));
    const { response } = await outcome(resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 2, delayInMs: 10 }) }).sendRequest(createTable, next));
    expect(next).toHaveBeenCalledTimes(1);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 1, stopReason: "success", possiblyApplied: true, ambiguousWrite: "not_resolvable" });
  });
});

describe("a write answered 2xx with a body that does not parse, through a real TableClient", () => {
  const url = "http://127.0.0.1:10002/devstoreaccount1";
  const stored = JSON.stringify({ "odata.etag": 'W/"datetime\'1\'"', PartitionKey: "p", RowKey: "r", Timestamp: "2026-01-01T00:00:00Z", n: 1 });

  /** A TableClient whose HttpClient answers from a script, recording each request's method. */
  function clientAnswering(...steps: Array<(req: PipelineRequest) => PipelineResponse>) {
    const sent: string[] = [];
    const httpClient: HttpClient = {
      async sendRequest(req) {
        sent.push(req.method);
        const step = steps.shift();
        if (step === undefined) throw new Error(`unexpected ${req.method}`);
        return step(req);
      },
    };
    const client = new TableClient(url, "orders", new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY), { httpClient, allowInsecureConnection: true });
    installResilience(client, { metrics: false, circuitBreaker: false, retry: fixedBackoff({ maxRetries: 5, delayInMs: 10 }) });
    return { client, sent };
  }

  it("an insert read back equal: not sent again, and the caller gets the success the SDK would have got", async () => {
    const { client, sent } = clientAnswering((r) => garbled(r, 201), (r) => reply(r, 200, stored, { etag: 'W/"datetime\'1\'"' }));
    let raw: PipelineResponse | undefined;
    const created = client.createEntity({ partitionKey: "p", rowKey: "r", n: 1 }, { onResponse: (r) => (raw = r) });
    const { response, error } = await outcome(created as Promise<never>);
    expect(error).toBeUndefined();
    expect(response).toMatchObject({ etag: 'W/"datetime\'1\'"' });
    expect(sent).toEqual(["POST", "GET"]);
    expect(getRetryInfo(raw)).toMatchObject({ attempts: 1, stopReason: "success", ambiguousWrite: "applied", possiblyApplied: false, unknownOutcomes: 1 });
  });

  it("an insert read back absent: not sent again; the SDK's PARSE_ERROR reaches the caller marked possibly applied", async () => {
    const { client, sent } = clientAnswering((r) => garbled(r, 201), (r) => reply(r, 404));
    const { error } = await outcome(client.createEntity({ partitionKey: "p", rowKey: "r", n: 1 }) as Promise<never>);
    expect(sent).toEqual(["POST", "GET"]);
    expect(error).toMatchObject({ name: "RestError", code: "PARSE_ERROR", statusCode: 201 });
    expect(isPossiblyApplied(error)).toBe(true);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stopReason: "success", ambiguousWrite: "differs" });
  });
});
