import { describe, expect, it } from "vitest";
import { describeAccountError } from "../../../tools/stress/describeAccountError.js";

describe("describeAccountError", () => {
  it.each([
    [{ statusCode: 403, details: { errorCode: "AuthenticationFailed" } }, /refused the request \(HTTP 403 AuthenticationFailed\): check the account key or SAS/],
    [{ statusCode: 401 }, /refused the request \(HTTP 401\)/],
    [{ statusCode: 404, code: "ResourceNotFound" }, /answered 404 ResourceNotFound: check the account name/],
    [{ code: "ENOTFOUND" }, /Cannot resolve acct.table.core.windows.net \(ENOTFOUND\)/],
    [{ code: "ECONNREFUSED" }, /Nothing accepts connections at acct.table.core.windows.net \(ECONNREFUSED\)/],
    [{ name: "TimeoutError" }, /did not answer in time/],
    [{ statusCode: 500, code: "InternalError" }, /answered HTTP 500 InternalError/],
    [new Error("boom"), /^Cannot reach the account at acct.table.core.windows.net\.$/],
  ])("%j", (error, expected) => {
    expect(describeAccountError(error, "acct.table.core.windows.net")).toMatch(expected);
  });

  it("never repeats the error's message or an odd code, which could quote a URL with a SAS", () => {
    const error = Object.assign(new Error("GET https://acct/t?sig=SECRET failed"), { code: "https://acct/t?sig=SECRET" });
    expect(describeAccountError(error, "acct")).not.toContain("SECRET");
  });
});
