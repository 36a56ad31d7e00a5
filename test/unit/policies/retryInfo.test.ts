import { describe, expect, it } from "vitest";
import { createHttpHeaders, createPipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { getRetryInfo, startRetryInfo } from "../../../src/policies/retryInfo.js";
import { isPossiblyApplied } from "../../support/possiblyApplied.js";
import { attachRetryInfo } from "../../../src/address/requestMarks.js";

/**
 * What `@azure/core-http-compat`'s `toCompatResponse` makes of a response for Blob and Queue
 * results' `_response`: an object spread of it, with copies of its request and headers.
 */
function compatCopy(response: PipelineResponse): Record<string, unknown> {
  const request = { url: response.request.url, method: response.request.method, headers: {}, requestId: response.request.requestId };
  return { ...response, request, headers: {} };
}

function operation(): { response: PipelineResponse } {
  const request = createPipelineRequest({ url: "https://acct.blob.core.windows.net/photos/cat.jpg", method: "PUT" });
  const info = startRetryInfo(request);
  info.attempts = 2;
  info.classes.push("throttled", "success");
  info.stopReason = "success";
  const response: PipelineResponse = { request, status: 201, headers: createHttpHeaders() };
  attachRetryInfo(response, info);
  return { response };
}

describe("getRetryInfo", () => {
  it("reads a Blob or Queue result's _response, a copy whose request is a copy too", () => {
    const { response } = operation();
    const compat = compatCopy(response);
    expect(getRetryInfo(compat)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], stopReason: "success" });
    expect(isPossiblyApplied(compat)).toBe(false);
  });

  it("reads the result itself, whose _response is not enumerable", () => {
    const { response } = operation();
    const result = { etag: '"0x1"' };
    Object.defineProperty(result, "_response", { value: compatCopy(response) });
    expect(getRetryInfo(result)?.attempts).toBe(2);
  });

  it("reads the response, its request, and an error carrying the request", () => {
    const { response } = operation();
    expect(getRetryInfo(response)?.attempts).toBe(2);
    expect(getRetryInfo(response.request)?.attempts).toBe(2);
    expect(getRetryInfo({ name: "RestError", request: response.request })?.attempts).toBe(2);
  });

  it("the mark stays out of JSON and Object.keys", () => {
    const { response } = operation();
    expect(Object.keys(response)).toEqual(["request", "status", "headers"]);
    expect(JSON.stringify(compatCopy(response))).not.toContain("throttled");
  });

  it.each([undefined, null, 5, "x", {}, { request: {} }, { _response: null }])("answers undefined for %o", (source) => {
    expect(getRetryInfo(source)).toBeUndefined();
  });
});
