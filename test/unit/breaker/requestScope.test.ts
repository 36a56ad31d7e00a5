import { createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import { describe, expect, it, vi } from "vitest";
import { createRequestScopeReader } from "../../../src/breaker/requestScope.js";
import { extractScope } from "../../../src/partition/extractScope.js";
import { deleteBatchBody } from "../../support/tableBatchBody.js";

// Counted, so the tests can tell a remembered scope from one read again the slow way.
vi.mock("../../../src/partition/extractScope.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/partition/extractScope.js")>();
  return { ...actual, extractScope: vi.fn(actual.extractScope) };
});

const AZ = "http://127.0.0.1:10002/devstoreaccount1";

function slowReads(action: () => void): number {
  const before = vi.mocked(extractScope).mock.calls.length;
  action();
  return vi.mocked(extractScope).mock.calls.length - before;
}

const batchBody = deleteBatchBody(AZ);

describe("createRequestScopeReader", () => {
  it("reads a $batch body once per operation, and again after release", () => {
    const reader = createRequestScopeReader("table", undefined);
    const request = createPipelineRequest({ method: "POST", url: `${AZ}/$batch`, body: batchBody });
    expect(slowReads(() => reader.read(request))).toBe(1);
    expect(slowReads(() => expect(reader.read(request)).toEqual({ key: "table|devstoreaccount1|t|pk", service: "table" }))).toBe(0);
    reader.release(request);
    expect(slowReads(() => reader.read(request))).toBe(1);
  });

  it("remembers an insert's scope, read from its body", () => {
    const reader = createRequestScopeReader("table", undefined);
    const request = createPipelineRequest({ method: "POST", url: `${AZ}/orders`, body: '{"PartitionKey":"p","RowKey":"r"}' });
    expect(slowReads(() => reader.read(request))).toBe(1);
    expect(slowReads(() => expect(reader.read(request)).toEqual({ key: "table|devstoreaccount1|orders|p", service: "table" }))).toBe(0);
  });

  it("reads other requests again on each call, with the same answer", () => {
    const reader = createRequestScopeReader("table", undefined);
    const entity = createPipelineRequest({ method: "GET", url: `${AZ}/orders(PartitionKey='p',RowKey='r')` });
    expect(slowReads(() => expect(reader.read(entity)).toEqual({ key: "table|devstoreaccount1|orders|p", service: "table" }))).toBe(0);
    expect(slowReads(() => expect(reader.read(entity)).toEqual({ key: "table|devstoreaccount1|orders|p", service: "table" }))).toBe(0);

    // Keys in another order, escaped: read the slow way, and again on the next call.
    const unusual = createPipelineRequest({ method: "GET", url: `${AZ}/orders(RowKey='r',PartitionKey='p%20q')` });
    expect(slowReads(() => reader.read(unusual))).toBe(1);
    expect(slowReads(() => expect(reader.read(unusual)).toEqual({ key: "table|devstoreaccount1|orders|p q", service: "table" }))).toBe(1);
    reader.release(unusual);
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
});
