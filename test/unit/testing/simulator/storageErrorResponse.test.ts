import { describe, expect, it } from "vitest";
import { defaultErrorCode, storageErrorResponse } from "../../../../src/testing/simulator/storageErrorResponse.js";

const date = new Date("2024-05-06T07:08:09.123Z");

describe("storageErrorResponse", () => {
  it("answers Tables in OData JSON", () => {
    const answer = storageErrorResponse({ service: "table", status: 503, code: "ServerBusy", method: "POST", date, clientRequestId: "c-1", version: "2019-02-02" });
    expect(answer.status).toBe(503);
    expect(answer.headers).toMatchObject({
      "content-type": "application/json;odata=minimalmetadata;streaming=true;charset=utf-8",
      "x-ms-error-code": "ServerBusy",
      "x-ms-client-request-id": "c-1",
      "x-ms-version": "2019-02-02",
      date: "Mon, 06 May 2024 07:08:09 GMT",
    });
    const requestId = answer.headers["x-ms-request-id"];
    expect(JSON.parse(answer.body)).toEqual({
      "odata.error": {
        code: "ServerBusy",
        message: { lang: "en-US", value: `The server is busy.\nRequestId:${requestId}\nTime:2024-05-06T07:08:09.1230000Z` },
      },
    });
    expect(answer.headers["content-length"]).toBe(String(Buffer.byteLength(answer.body)));
  });

  it.each(["blob", "queue"] as const)("answers %s in XML", (service) => {
    const answer = storageErrorResponse({ service, status: 500, code: "OperationTimedOut", method: "PUT", date });
    expect(answer.headers["content-type"]).toBe("application/xml");
    expect(answer.body).toMatch(
      /^<\?xml version="1\.0" encoding="utf-8"\?><Error><Code>OperationTimedOut<\/Code><Message>Operation could not be completed within the specified time\.\nRequestId:[0-9a-f-]{36}\nTime:2024-05-06T07:08:09\.1230000Z<\/Message><\/Error>$/,
    );
  });

  it("sends no body to HEAD", () => {
    const answer = storageErrorResponse({ service: "blob", status: 503, code: "ServerBusy", method: "HEAD" });
    expect(answer.body).toBe("");
    expect(answer.headers["content-length"]).toBe("0");
    expect(answer.headers["x-ms-error-code"]).toBe("ServerBusy");
  });

  it("adds extra headers and gives each answer its own request id", () => {
    const a = storageErrorResponse({ service: "table", status: 429, code: "ServerBusy", method: "GET", extraHeaders: { "Retry-After": "2" } });
    const b = storageErrorResponse({ service: "table", status: 429, code: "ServerBusy", method: "GET" });
    expect(a.headers["Retry-After"]).toBe("2");
    expect(a.headers["x-ms-request-id"]).not.toBe(b.headers["x-ms-request-id"]);
  });

  it.each([
    [403, "AuthorizationFailure"],
    [501, "NotImplemented"],
    [503, "ServerBusy"],
    [500, "InternalError"],
    [504, "OperationTimedOut"],
    [418, "InvalidInput"],
    [502, "InternalError"],
  ])("defaults status %i to %s", (status, code) => {
    expect(defaultErrorCode(status)).toBe(code);
  });
});
