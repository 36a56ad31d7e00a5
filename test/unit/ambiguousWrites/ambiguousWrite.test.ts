import { describe, expect, it } from "vitest";
import { createHttpHeaders, createPipelineRequest, RestError, type PipelineRequest } from "@azure/core-rest-pipeline";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { entityUrl } from "../../../src/address/tableWrite.js";
import { entityMatches } from "../../../src/ambiguousWrites/entityMatches.js";
import { type AttemptResult } from "../../../src/classification/attemptResult.js";
import { isAppliedAnswer, isUnknownOutcome } from "../../../src/ambiguousWrites/writeOutcome.js";

const base = "https://acct.table.core.windows.net";
const entity = `${base}/orders(PartitionKey='p''1',RowKey='r%2F1')`;

/** What the request's address says the write does, read as the retry policy reads it (the body from the request). */
function tableWriteOf(method: string, url: string, body: string | undefined, headers: Record<string, string> = {}) {
  const request = createPipelineRequest({ method: method as PipelineRequest["method"], url, body, headers: createHttpHeaders(headers) });
  return readRequestAddress(request).tableWrite;
}

describe("RequestAddress.tableWrite", () => {
  it.each([
    ["POST", `${base}/orders`, {}, '{"PartitionKey":"p","RowKey":"r"}', { kind: "insert", operation: "insert_entity", partitionKey: "p", rowKey: "r" }],
    ["POST", "http://127.0.0.1:10002/devstoreaccount1/orders", {}, '{"PartitionKey":"p","RowKey":"r"}', { kind: "insert" }],
    ["PUT", entity, { "if-match": 'W/"x"' }, "{}", { kind: "replace", operation: "update_entity", partitionKey: "p'1", rowKey: "r/1", ifMatch: 'W/"x"' }],
    ["PATCH", entity, { "if-match": "*" }, "{}", { kind: "merge", ifMatch: "*" }],
    ["POST", entity, { "if-match": 'W/"x"', "x-http-method": "MERGE" }, "{}", { kind: "merge" }],
    ["PUT", entity, {}, "{}", { kind: "upsert", operation: "upsert_entity" }],
    ["DELETE", entity, { "if-match": "*" }, undefined, { kind: "delete", operation: "delete_entity", ifMatch: "*" }],
    ["POST", `${base}/$batch`, {}, "--batch", { kind: "batch", operation: "batch" }],
  ])("%s %s %o", (method, url, headers, body, expected) => {
    expect(tableWriteOf(method, url, body, headers)).toMatchObject(expected);
  });

  it.each([
    ["GET", entity, undefined],
    ["POST", `${base}/Tables`, '{"TableName":"x"}'],
    ["DELETE", `${base}/Tables('orders')`, undefined],
    ["PUT", `${base}/orders?comp=acl`, "<xml/>"],
    ["POST", `${base}/orders`, "not json"],
    ["POST", `${base}/orders`, '{"PartitionKey":1,"RowKey":"r"}'],
    ["POST", `${base}/orders`, ""],
    ["PUT", `${base}/container/blob`, "data"],
    ["PUT", "not a url", "{}"],
    ["PUT", `${base}/orders(PartitionKey='p'`, "{}"],
  ])("%s %s is not an entity write", (method, url, body) => {
    expect(tableWriteOf(method, url, body)).toBeUndefined();
  });
});

describe("isUnknownOutcome", () => {
  const r = (partial: Partial<AttemptResult> & Pick<AttemptResult, "outcomeClass">): AttemptResult => partial as AttemptResult;
  it.each([
    [r({ outcomeClass: "transient", error: new RestError("socket hang up", { code: "ECONNRESET" }) }), true],
    [r({ outcomeClass: "timeout", error: new RestError("timed out", { code: "ETIMEDOUT" }) }), true],
    [r({ outcomeClass: "transient", error: new Error("other side closed") }), true],
    [r({ outcomeClass: "timeout", status: 500, errorCode: "OperationTimedOut" }), true],
    [r({ outcomeClass: "transient", status: 500, errorCode: "InternalError" }), true],
    [r({ outcomeClass: "transient", status: 502 }), true],
    [r({ outcomeClass: "timeout", status: 504 }), true],
    [r({ outcomeClass: "timeout", status: 408 }), false],
    [r({ outcomeClass: "throttled", status: 503, errorCode: "ServerBusy" }), false],
    [r({ outcomeClass: "transient", error: new RestError("refused", { code: "ECONNREFUSED" }) }), false],
    [r({ outcomeClass: "transient", error: new RestError("dns", { code: "ENOTFOUND" }) }), false],
    [r({ outcomeClass: "permanent", status: 409 }), false],
    [r({ outcomeClass: "success", status: 204 }), false],
    [r({ outcomeClass: "aborted", error: new Error("aborted") }), false],
  ])("%#", (result, expected) => {
    expect(isUnknownOutcome(result)).toBe(expected);
  });
});

describe("isAppliedAnswer", () => {
  const insert = { kind: "insert", operation: "insert_entity" } as const;
  const del = { kind: "delete", operation: "delete_entity", ifMatch: "*" } as const;
  const conditional = { kind: "replace", operation: "update_entity", ifMatch: 'W/"x"' } as const;
  const star = { kind: "merge", operation: "update_entity", ifMatch: "*" } as const;
  it.each([
    [insert, 409, "EntityAlreadyExists", true],
    [insert, 409, undefined, true],
    [insert, 409, "TableAlreadyExists", false],
    [insert, 404, "ResourceNotFound", false],
    [del, 404, "ResourceNotFound", true],
    [del, 404, "EntityNotFound", true],
    [del, 404, "TableNotFound", false],
    [conditional, 412, "UpdateConditionNotSatisfied", true],
    [star, 412, "UpdateConditionNotSatisfied", false],
    [conditional, 409, undefined, false],
  ] as const)("%o %i %s", (write, status, errorCode, expected) => {
    expect(isAppliedAnswer(write, { status, errorCode, outcomeClass: "permanent" })).toBe(expected);
  });
});

describe("entityUrl", () => {
  it("appends the entity address to an insert's table URL, quoting keys like the SDK, keeping the query", () => {
    const url = entityUrl("http://127.0.0.1:10002/devstoreaccount1/orders?timeout=30", {
      kind: "insert",
      operation: "insert_entity",
      partitionKey: "O'Brien",
      rowKey: "a/b c#?",
    });
    expect(url).toBe("http://127.0.0.1:10002/devstoreaccount1/orders(PartitionKey='O''Brien',RowKey='a%2Fb%20c%23%3F')?timeout=30");
  });

  it("uses an update's own URL", () => {
    expect(entityUrl(entity, { kind: "replace", operation: "update_entity" })).toBe(entity);
  });
});

describe("entityMatches", () => {
  const sent = {
    PartitionKey: "p",
    RowKey: "r",
    s: "x",
    n: 1,
    d: 1.5,
    big: "9007199254740993",
    "big@odata.type": "Edm.Int64",
    dt: "2026-01-02T03:04:05.678Z",
    "dt@odata.type": "Edm.DateTime",
    g: "0B3C9C35-6F3F-4F4A-9F3E-1C2B3A4D5E6F",
    "g@odata.type": "Edm.Guid",
    b: "AQI=",
    "b@odata.type": "Edm.Binary",
    t: true,
    dd: "2",
    "dd@odata.type": "Edm.Double",
  };
  const stored = {
    "odata.metadata": "https://acct/$metadata#orders/@Element",
    "odata.etag": 'W/"datetime\'2026\'"',
    PartitionKey: "p",
    RowKey: "r",
    Timestamp: "2026-01-02T03:04:06.0000000Z",
    "Timestamp@odata.type": "Edm.DateTime",
    s: "x",
    n: 1,
    d: 1.5,
    big: "9007199254740993",
    "big@odata.type": "Edm.Int64",
    dt: "2026-01-02T03:04:05.6780000Z",
    "dt@odata.type": "Edm.DateTime",
    g: "0b3c9c35-6f3f-4f4a-9f3e-1c2b3a4d5e6f",
    "g@odata.type": "Edm.Guid",
    b: "AQI=",
    "b@odata.type": "Edm.Binary",
    t: true,
    dd: 2,
    "dd@odata.type": "Edm.Double",
  };

  it("equal values and types, metadata and Timestamp ignored, DateTime to 100 ns, Guid case-insensitive", () => {
    expect(entityMatches(sent, stored)).toBe(true);
  });

  it.each([
    ["a different value", { s: "y" }],
    ["a different Int64", { big: "9007199254740992" }],
    ["a lost precision DateTime", { dt: "2026-01-02T03:04:05.6781000Z" }],
    ["Int32 stored as Int64", { n: "1", "n@odata.type": "Edm.Int64" }],
    ["Double stored as Int32", { dd: 2, "dd@odata.type": undefined }],
    ["an extra property", { extra: "x" }],
    ["a missing property", { t: undefined }],
    ["another Binary", { b: "AQM=" }],
  ])("differs: %s", (_name, change) => {
    const changed: Record<string, unknown> = { ...stored, ...change };
    for (const [key, value] of Object.entries(change)) if (value === undefined) delete changed[key];
    expect(entityMatches(sent, changed)).toBe(false);
  });

  it("nulls count as absent; NaN and Infinity doubles compare as text", () => {
    expect(entityMatches({ a: null, x: "NaN", "x@odata.type": "Edm.Double" }, { x: "NaN", "x@odata.type": "Edm.Double" })).toBe(true);
    expect(entityMatches({ x: "Infinity", "x@odata.type": "Edm.Double" }, { x: "-Infinity", "x@odata.type": "Edm.Double" })).toBe(false);
  });
});
