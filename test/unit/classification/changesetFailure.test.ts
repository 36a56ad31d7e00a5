import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MAX_BATCH_SCAN_CHARS, readChangesetFailure } from "../../../src/classification/changesetFailure.js";
import { changesetErrorResponse } from "../../../src/testing/simulator/changesetErrorResponse.js";

const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/batchResponses/${name}.txt`, import.meta.url), "utf8");

/** A `$batch` answer in Azure's shape (docs: "Performing entity group transactions") with one sub-response. */
function batchAnswer(statusLine: string, headers: string[], body: string, eol = "\r\n"): string {
  return [
    "--batchresponse_1",
    "Content-Type: multipart/mixed; boundary=changesetresponse_2",
    "",
    "--changesetresponse_2",
    "Content-Type: application/http",
    "Content-Transfer-Encoding: binary",
    "",
    statusLine,
    ...headers,
    "",
    body,
    "--changesetresponse_2--",
    "--batchresponse_1--",
    "",
  ].join(eol);
}

const odataError = (code: string, message = "0:Simulated."): string => JSON.stringify({ "odata.error": { code, message: { lang: "en-US", value: message } } });

describe("readChangesetFailure: real answers", () => {
  it("Azurite, a transaction that succeeded: no failure", () => {
    const body = fixture("azuriteTransactionSucceeded");
    expect(body).toContain("HTTP/1.1 204 No Content");
    expect(readChangesetFailure(body)).toBeUndefined();
  });

  it("Azurite, an insert of an existing entity: 409 EntityAlreadyExists, read from the JSON body", () => {
    expect(readChangesetFailure(fixture("azuriteTransactionConflict"))).toEqual({ status: 409, errorCode: "EntityAlreadyExists", retryAfterInMs: undefined });
  });

  it("the simulator's failed changeset: status, code and the retry hint inside the changeset", () => {
    const answer = changesetErrorResponse({ status: 503, code: "ServerBusy", changesetHeaders: { "x-ms-retry-after-ms": "250" } });
    expect(answer.status).toBe(202);
    expect(readChangesetFailure(answer.body)).toEqual({ status: 503, errorCode: "ServerBusy", retryAfterInMs: 250 });
  });
});

describe("readChangesetFailure: where the code and the hint come from", () => {
  it("500 OperationTimedOut from the JSON body", () => {
    const body = batchAnswer("HTTP/1.1 500 Internal Server Error", ["Content-ID: 1"], odataError("OperationTimedOut"));
    expect(readChangesetFailure(body)).toEqual({ status: 500, errorCode: "OperationTimedOut", retryAfterInMs: undefined });
  });

  it("an x-ms-error-code header inside the changeset wins over the body's code", () => {
    const body = batchAnswer("HTTP/1.1 503 Service Unavailable", ["x-ms-error-code: ServerBusy"], odataError("InternalError"));
    expect(readChangesetFailure(body)?.errorCode).toBe("ServerBusy");
  });

  it("a header code that is not a plain code is dropped, and the body's used", () => {
    const body = batchAnswer("HTTP/1.1 503 Service Unavailable", ["x-ms-error-code: Server Busy<script>"], odataError("ServerBusy"));
    expect(readChangesetFailure(body)?.errorCode).toBe("ServerBusy");
  });

  it("a body code that is not a plain code is dropped", () => {
    const body = batchAnswer("HTTP/1.1 429 Too Many Requests", [], odataError("Too\nMany"));
    expect(readChangesetFailure(body)).toEqual({ status: 429, errorCode: undefined, retryAfterInMs: undefined });
  });

  it("Cosmos DB style: 429 TooManyRequests with Retry-After in seconds and x-ms-retry-after-ms; the longer wins", () => {
    const body = batchAnswer("HTTP/1.1 429 Too Many Requests", ["Retry-After: 1", "x-ms-retry-after-ms: 400"], odataError("TooManyRequests"));
    expect(readChangesetFailure(body)).toEqual({ status: 429, errorCode: "TooManyRequests", retryAfterInMs: 1000 });
  });

  it("header names in any case; retry-after-ms too", () => {
    const body = batchAnswer("HTTP/1.1 503 Service Unavailable", ["RETRY-AFTER-MS: 75"], odataError("ServerBusy"));
    expect(readChangesetFailure(body)?.retryAfterInMs).toBe(75);
  });

  it("an XML (Atom) error body's <code>", () => {
    const body = batchAnswer(
      "HTTP/1.1 400 Bad Request",
      ["Content-Type: application/xml"],
      '<?xml version="1.0" encoding="utf-8"?><error><code>InvalidInput</code><message>3:One of the request inputs is not valid.</message></error>',
    );
    expect(readChangesetFailure(body)).toEqual({ status: 400, errorCode: "InvalidInput", retryAfterInMs: undefined });
  });

  it("LF line endings read as CRLF ones", () => {
    const body = batchAnswer("HTTP/1.1 503 Service Unavailable", ["x-ms-retry-after-ms: 20"], odataError("ServerBusy"), "\n");
    expect(readChangesetFailure(body)).toEqual({ status: 503, errorCode: "ServerBusy", retryAfterInMs: 20 });
  });

  it("the first failure after successes; a 424 (another operation's failure) only when nothing else failed", () => {
    const ok = "HTTP/1.1 204 No Content\r\n\r\n";
    const dependency = "HTTP/1.1 424 Failed Dependency\r\n\r\n";
    expect(readChangesetFailure(`--c\r\n${ok}--c\r\n${dependency}--c\r\nHTTP/1.1 429 Too Many Requests\r\n\r\n--c--`)?.status).toBe(429);
    expect(readChangesetFailure(`--c\r\n${ok}--c\r\n${dependency}--c--`)?.status).toBe(424);
  });
});

describe("readChangesetFailure: hostile and broken bodies never throw and read a bounded prefix", () => {
  it("no status line, empty, or garbage: undefined", () => {
    for (const body of ["", "--", "HTTP/1.", "HTTP/1.1", "HTTP/1.1 5", "HTTP/1.1 50", "\n\n\n", "{", "--batchresponse_x\r\n\r\n--"]) {
      expect(readChangesetFailure(body), JSON.stringify(body)).toBeUndefined();
    }
  });

  it("status lines that are not status lines: mid-line, HTTP/1.2, four digits, letters, 600+", () => {
    for (const line of ["xHTTP/1.1 503 Busy", "HTTP/1.2 503 Busy", "HTTP/1.1 5030 Busy", "HTTP/1.1 5x3 Busy", "HTTP/1.1 603 Nope", "HTTP/1.1  503 Busy"]) {
      expect(readChangesetFailure(batchAnswer(line, [], odataError("ServerBusy"))), line).toBeUndefined();
    }
  });

  it("a status line at the very end of the text, without a reason phrase", () => {
    expect(readChangesetFailure("--c\r\nHTTP/1.1 503")?.status).toBe(503);
  });

  it("a failure past the scan bound is not seen (the answer is left to the SDK)", () => {
    const padding = `${"x".repeat(80)}\r\n`.repeat(Math.ceil(MAX_BATCH_SCAN_CHARS / 82) + 1);
    expect(readChangesetFailure(padding + batchAnswer("HTTP/1.1 503 Service Unavailable", [], odataError("ServerBusy")))).toBeUndefined();
  });

  it("huge bodies: 16 MiB of one character, or of status-line look-alikes, end with an answer", () => {
    expect(readChangesetFailure("a".repeat(16 * 1024 * 1024))).toBeUndefined();
    expect(readChangesetFailure("HTTP/1.9 ".repeat(2 * 1024 * 1024))).toBeUndefined();
    expect(readChangesetFailure("\nHTTP/1.1 204 OK".repeat(1024 * 1024))).toBeUndefined();
  });

  it("a huge header block and a huge, unclosed JSON body: the status still counts, the rest is bounded", () => {
    const headers = Array.from({ length: 5000 }, (_, i) => `X-Filler-${i}: ${"v".repeat(20)}`);
    const failure = readChangesetFailure(batchAnswer("HTTP/1.1 503 Service Unavailable", [...headers, "x-ms-retry-after-ms: 5"], `{"odata.error":{"code":"ServerBusy","message":"${"m".repeat(1_000_000)}`));
    // The hint sits past the part's bound, and the body is not valid JSON: only the status is read.
    expect(failure).toEqual({ status: 503, errorCode: undefined, retryAfterInMs: undefined });
  });

  it("JSON that is not an error object: no code", () => {
    for (const body of ["{}", '{"odata.error":null}', '{"odata.error":{"code":42}}', '{"odata.error":"ServerBusy"}', "[1,2]", '{"a":'.repeat(10_000)]) {
      expect(readChangesetFailure(batchAnswer("HTTP/1.1 503 Service Unavailable", [], body)), body.slice(0, 40)).toEqual({ status: 503, errorCode: undefined, retryAfterInMs: undefined });
    }
  });

  it("retry hints that are not numbers or dates are ignored", () => {
    const body = batchAnswer("HTTP/1.1 503 Service Unavailable", ["x-ms-retry-after-ms: -5", "Retry-After: soon", "retry-after-ms: 0x10"], odataError("ServerBusy"));
    expect(readChangesetFailure(body)?.retryAfterInMs).toBeUndefined();
  });

  it("random mixtures of the tokens a parser trips on never throw", () => {
    const tokens = ["HTTP/1.1 ", "HTTP/1.0 ", "503", "429", "204", " ", "\r\n", "\n", "--", "changesetresponse_", ":", "x-ms-error-code", "Retry-After", "{", "}", '"odata.error"', '"code"', "ServerBusy", "<code>", "</code>", "\u0000", "\uD800"];
    let seed = 7;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    for (let run = 0; run < 2000; run++) {
      const length = Math.floor(random() * 60);
      const body = Array.from({ length }, () => tokens[Math.floor(random() * tokens.length)]).join("");
      const failure = readChangesetFailure(body);
      if (failure !== undefined) {
        expect(failure.status).toBeGreaterThanOrEqual(400);
        expect(failure.status).toBeLessThan(600);
        if (failure.errorCode !== undefined) expect(failure.errorCode).toMatch(/^[A-Za-z0-9]{1,64}$/);
      }
    }
  });
});
