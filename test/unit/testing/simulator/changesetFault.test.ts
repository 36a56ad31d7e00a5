import { describe, expect, it } from "vitest";
import type { SimulatedRequestInfo } from "../../../../src/testing/simulator/faultRule.js";
import { FAULT_KINDS, validateFaultRule } from "../../../../src/testing/simulator/faultRule.js";
import { FaultSchedule } from "../../../../src/testing/simulator/faultSchedule.js";
import { changesetErrorResponse } from "../../../../src/testing/simulator/changesetErrorResponse.js";

function request(method: string, path: string): SimulatedRequestInfo {
  return { method, path, service: "table", scope: { service: "table", account: "devstoreaccount1", resource: "orders", partition: "p" }, headers: {}, body: undefined };
}

describe("the failChangeset fault", () => {
  it("is a fault kind, validated like the others", () => {
    expect(FAULT_KINDS).toContain("failChangeset");
    expect(validateFaultRule({ kind: "failChangeset", status: 429, errorCode: "TooManyRequests", retryAfter: { ms: 50 } })).toMatchObject({ kind: "failChangeset", status: 429 });
    expect(() => validateFaultRule({ kind: "failChangeset", status: 99 })).toThrow(RangeError);
  });

  it("faults only POST .../$batch: other requests matching the rule pass through and keep its count", () => {
    const schedule = new FaultSchedule({ now: () => 0, random: () => 0 });
    schedule.add({ kind: "failChangeset", count: 1 });
    expect(schedule.select(request("POST", "/devstoreaccount1/orders"))).toBeUndefined();
    expect(schedule.select(request("GET", "/devstoreaccount1/$batch"))).toBeUndefined();
    expect(schedule.select(request("POST", "/devstoreaccount1/$batch"))?.kind).toBe("failChangeset");
    expect(schedule.select(request("POST", "/devstoreaccount1/$batch?timeout=30"))).toBeUndefined(); // count spent
  });
});

describe("changesetErrorResponse", () => {
  it("is a 202 multipart answer holding one failed sub-response, shaped as Azure's", () => {
    const answer = changesetErrorResponse({ status: 503, code: "ServerBusy", clientRequestId: "id-1", version: "2019-02-02", changesetHeaders: { "x-ms-retry-after-ms": "120" } });
    expect(answer.status).toBe(202);
    const boundary = /^multipart\/mixed; boundary=(batchresponse_[0-9a-f-]{36})$/.exec(answer.headers["content-type"] ?? "")?.[1];
    expect(boundary).toBeDefined();
    expect(answer.headers).toMatchObject({ "x-ms-client-request-id": "id-1", "x-ms-version": "2019-02-02", "content-length": String(Buffer.byteLength(answer.body)) });
    const lines = answer.body.split("\r\n");
    expect(lines[0]).toBe(`--${boundary}`);
    expect(lines).toContain("HTTP/1.1 503 Service Unavailable");
    expect(lines).toContain("x-ms-retry-after-ms: 120");
    expect(lines.filter((line) => line.startsWith("HTTP/1.1 "))).toHaveLength(1);
    const json = lines.find((line) => line.startsWith("{")) as string;
    expect(JSON.parse(json)).toMatchObject({ "odata.error": { code: "ServerBusy", message: { value: expect.stringMatching(/^0:The server is busy\./) } } });
    expect(answer.body.endsWith(`--${boundary}--\r\n`)).toBe(true);
    // The Tables SDK splits on this prefix and reads one sub-response between the first and the last part.
    expect(answer.body.split("--changesetresponse_")).toHaveLength(3);
  });
});
