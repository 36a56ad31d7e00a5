import { describe, expect, it } from "vitest";
import { RestError } from "@azure/core-rest-pipeline";
import { AbortError } from "@azure/abort-controller";
import { classify, type OutcomeClass } from "../../../src/index.js";

function networkError(code: string, message = "boom"): Error {
  return Object.assign(new Error(message), { code });
}

describe("classify: the status table", () => {
  const table: Array<[number, string | undefined, OutcomeClass]> = [
    [200, undefined, "success"],
    [201, undefined, "success"],
    [204, undefined, "success"],
    [304, undefined, "success"],
    [429, undefined, "throttled"],
    [503, "ServerBusy", "throttled"],
    [503, undefined, "throttled"],
    [408, undefined, "timeout"],
    [504, undefined, "timeout"],
    [500, "OperationTimedOut", "timeout"],
    [500, "InternalError", "transient"],
    [500, undefined, "transient"],
    [502, undefined, "transient"],
    [507, undefined, "transient"],
    [400, "InvalidInput", "permanent"],
    [401, undefined, "permanent"],
    [403, "AuthorizationFailure", "permanent"],
    [404, "ResourceNotFound", "permanent"],
    [409, "EntityAlreadyExists", "permanent"],
    [412, "UpdateConditionNotSatisfied", "permanent"],
    [413, undefined, "permanent"],
    [501, undefined, "permanent"],
    [505, undefined, "permanent"],
  ];
  it.each(table)("%i %s -> %s", (status, errorCode, expected) => {
    expect(classify({ status, errorCode })).toBe(expected);
  });

  it("reads the status of a RestError", () => {
    expect(classify({ error: new RestError("busy", { statusCode: 503 }) })).toBe("throttled");
    expect(classify({ error: new RestError("gone", { statusCode: 404 }) })).toBe("permanent");
  });
});

describe("classify: thrown errors", () => {
  it.each(["ECONNRESET", "ECONNREFUSED", "EPIPE", "EAI_AGAIN", "REQUEST_SEND_ERROR", "ENOTFOUND", "UND_ERR_SOCKET"])(
    "%s is transient",
    (code) => {
      expect(classify({ error: networkError(code) })).toBe("transient");
      expect(classify({ error: new RestError("x", { code }) })).toBe("transient");
    },
  );

  it.each(["ETIMEDOUT", "ESOCKETTIMEDOUT", "UND_ERR_HEADERS_TIMEOUT"])("%s is timeout", (code) => {
    expect(classify({ error: networkError(code) })).toBe("timeout");
  });

  it("recognises 'socket hang up' without a code", () => {
    expect(classify({ error: new Error("socket hang up") })).toBe("transient");
  });

  // Issue 17 item 3: answers that could not be read were permanent, so an applied write reached the caller unmarked.
  it("an answer that could not be read is transient: a body cut while read (PARSE_ERROR, no request), HTTP parser errors", () => {
    expect(classify({ error: new RestError("Error reading response as text: aborted", { code: "PARSE_ERROR" }) })).toBe("transient");
    for (const code of ["HPE_INVALID_CONSTANT", "HPE_HEADER_OVERFLOW", "HPE_INVALID_CHUNK_SIZE", "HPE_UNEXPECTED_CONTENT_LENGTH"]) {
      expect(classify({ error: new RestError("Parse Error", { code }) })).toBe("transient");
    }
  });

  it("a PARSE_ERROR carrying a status (the SDK's deserializer, outside the retry phase) is classified by its status", () => {
    expect(classify({ error: new RestError("bad JSON", { code: "PARSE_ERROR", statusCode: 201 }) })).toBe("success");
  });

  it("treats an abort as aborted", () => {
    expect(classify({ error: new AbortError("The operation was aborted.") })).toBe("aborted");
    const domAbort = new Error("aborted");
    domAbort.name = "AbortError";
    expect(classify({ error: domAbort })).toBe("aborted");
  });

  it("treats unknown errors as permanent", () => {
    expect(classify({ error: new TypeError("bug") })).toBe("permanent");
    expect(classify({ error: "a string" })).toBe("permanent");
  });

  it("treats an empty outcome as success", () => {
    expect(classify({})).toBe("success");
  });
});

describe("classify: user rules", () => {
  it("adds retriable status and error codes", () => {
    expect(classify({ status: 409 }, { retriableStatusCodes: [409] })).toBe("transient");
    expect(classify({ status: 400, errorCode: "Flaky" }, { retriableErrorCodes: ["Flaky"] })).toBe("transient");
    expect(classify({ error: networkError("EWEIRD") }, { retriableErrorCodes: ["EWEIRD"] })).toBe("transient");
  });

  it("makes statuses and codes permanent", () => {
    expect(classify({ status: 500 }, { nonRetriableStatusCodes: [500] })).toBe("permanent");
    expect(classify({ status: 503, errorCode: "ServerBusy" }, { nonRetriableErrorCodes: ["ServerBusy"] })).toBe(
      "permanent",
    );
  });

  it("lets a predicate override, but never un-abort", () => {
    const rules = { classify: () => "transient" as const };
    expect(classify({ status: 404 }, rules)).toBe("transient");
    expect(classify({ error: new AbortError("x") }, rules)).toBe("aborted");
    expect(classify({ status: 404 }, { classify: () => undefined })).toBe("permanent");
  });

  it("rejects a predicate that returns a non-class", () => {
    expect(() => classify({ status: 404 }, { classify: () => "maybe" as never })).toThrow(/not an outcome class/);
  });
});
