import { createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import { describe, expect, it, vi } from "vitest";
import { readRequestAddress } from "../../../src/address/readRequestAddress.js";
import { createRequestScopeReader } from "../../../src/breaker/requestScope.js";
import { deleteBatchBody } from "../../support/tableBatchBody.js";

// Counted, so the tests can tell a remembered scope from one read again.
vi.mock("../../../src/address/readRequestAddress.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/address/readRequestAddress.js")>();
  return { ...actual, readRequestAddress: vi.fn(actual.readRequestAddress) };
});

const AZ = "http://127.0.0.1:10002/devstoreaccount1";

function reads(action: () => void): number {
  const before = vi.mocked(readRequestAddress).mock.calls.length;
  action();
  return vi.mocked(readRequestAddress).mock.calls.length - before;
}

const batchBody = deleteBatchBody(AZ);

describe("createRequestScopeReader", () => {
  it("reads a $batch body once per operation, and again after release", () => {
    const reader = createRequestScopeReader("table", undefined);
    const request = createPipelineRequest({ method: "POST", url: `${AZ}/$batch`, body: batchBody });
    expect(reads(() => reader.read(request))).toBe(1);
    expect(reads(() => expect(reader.read(request)).toEqual({ key: "table|devstoreaccount1|t|pk", service: "table" }))).toBe(0);
    reader.release(request);
    expect(reads(() => reader.read(request))).toBe(1);
  });

  it("remembers an insert's scope, read from its body", () => {
    const reader = createRequestScopeReader("table", undefined);
    const request = createPipelineRequest({ method: "POST", url: `${AZ}/orders`, body: '{"PartitionKey":"p","RowKey":"r"}' });
    expect(reads(() => reader.read(request))).toBe(1);
    expect(reads(() => expect(reader.read(request)).toEqual({ key: "table|devstoreaccount1|orders|p", service: "table" }))).toBe(0);
  });

  it("reads an entity address once per operation, with the address's scope", () => {
    const reader = createRequestScopeReader("table", undefined);
    const unusual = createPipelineRequest({ method: "GET", url: `${AZ}/orders(RowKey='r',PartitionKey='p%20q')` });
    expect(reads(() => expect(reader.read(unusual)).toEqual({ key: "table|devstoreaccount1|orders|p q", service: "table" }))).toBe(1);
    expect(reads(() => expect(reader.read(unusual)).toEqual({ key: "table|devstoreaccount1|orders|p q", service: "table" }))).toBe(0);
    reader.release(unusual);
    expect(reads(() => reader.read(unusual))).toBe(1);
  });

  it("gives no scope where the address has none (the request bypasses the breaker)", () => {
    const reader = createRequestScopeReader(undefined, undefined);
    expect(reader.read(createPipelineRequest({ method: "GET", url: `${AZ}/orders` }))).toBeUndefined();
  });

  it("calls a user getScope once per operation", () => {
    const getScope = vi.fn((request: PipelineRequest) => (request.url.includes("'p'") ? "mine" : undefined));
    const reader = createRequestScopeReader("table", getScope);
    const request = createPipelineRequest({ method: "GET", url: `${AZ}/orders(PartitionKey='p',RowKey='r')` });
    expect(reader.read(request)).toEqual({ key: "mine", service: "table" });
    expect(reader.read(request)).toEqual({ key: "mine", service: "table" });
    expect(getScope).toHaveBeenCalledTimes(1);
    reader.release(request);
    reader.read(request);
    expect(getScope).toHaveBeenCalledTimes(2);
  });

  it("a user getScope's key takes the service of the install, else of the URL", () => {
    const reader = createRequestScopeReader(undefined, () => "mine");
    expect(reader.read(createPipelineRequest({ method: "GET", url: "https://acct.queue.core.windows.net/jobs" }))).toEqual({ key: "mine", service: "queue" });
    expect(reader.read(createPipelineRequest({ method: "GET", url: "http://127.0.0.1:10000/devstoreaccount1/c" }))).toEqual({ key: "mine", service: "table" });
  });
});
