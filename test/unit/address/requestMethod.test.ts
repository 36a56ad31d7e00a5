import { describe, expect, it } from "vitest";
import { upperCaseMethod } from "../../../src/address/requestMethod.js";

describe("upperCaseMethod", () => {
  it("answers as toUpperCase() for the SDKs' methods and for any other spelling", () => {
    for (const method of ["GET", "PUT", "POST", "DELETE", "PATCH", "MERGE", "HEAD", "OPTIONS", "get", "Merge", "pAtCh", "TRACE", ""]) {
      expect(upperCaseMethod(method)).toBe(method.toUpperCase());
    }
  });
});
