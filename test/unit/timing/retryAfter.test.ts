import { describe, expect, it } from "vitest";
import { createHttpHeaders } from "@azure/core-rest-pipeline";
import { parseRetryAfterInMs } from "../../../src/timing/retryAfter.js";

const now = Date.parse("2026-11-21T12:00:00Z");
const parse = (headers: Record<string, string>): number | undefined =>
  parseRetryAfterInMs(createHttpHeaders(headers), now);

describe("parseRetryAfterInMs", () => {
  it("reads each header", () => {
    expect(parse({ "retry-after-ms": "250" })).toBe(250);
    expect(parse({ "x-ms-retry-after-ms": "1200" })).toBe(1200);
    expect(parse({ "Retry-After": "3" })).toBe(3000);
    expect(parse({ "Retry-After": "1.5" })).toBe(1500);
  });

  it("reads an HTTP date relative to now", () => {
    expect(parse({ "Retry-After": "Sat, 21 Nov 2026 12:00:05 GMT" })).toBe(5000);
  });

  it("treats a date in the past as 0", () => {
    expect(parse({ "Retry-After": "Fri, 20 Nov 2026 12:00:00 GMT" })).toBe(0);
  });

  it("takes the longest when headers disagree", () => {
    expect(parse({ "Retry-After": "2", "x-ms-retry-after-ms": "500" })).toBe(2000);
    expect(parse({ "Retry-After": "1", "retry-after-ms": "4000" })).toBe(4000);
  });

  it.each(["-1", "abc", "", "0x10", "1e3", "Infinity", "NaN", " ", "12abc"])("ignores %j", (value) => {
    expect(parse({ "Retry-After": value })).toBeUndefined();
    expect(parse({ "x-ms-retry-after-ms": value })).toBeUndefined();
  });

  it("returns undefined without hints", () => {
    expect(parse({})).toBeUndefined();
  });
});
