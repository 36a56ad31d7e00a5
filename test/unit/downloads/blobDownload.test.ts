import { describe, expect, it } from "vitest";
import { Readable } from "node:stream";
import { createHttpHeaders, createPipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { aimAtRest, readBlobDownload, resumedAnswerProblem, type BlobDownload } from "../../../src/downloads/blobDownload.js";
import { ResumingBody } from "../../../src/downloads/resumableDownload.js";

const url = "https://acct.blob.core.windows.net/photos/cat.jpg";
const ETAG = '"0x1"';

function answerOf(status: number, headers: Record<string, string>, body = true): PipelineResponse {
  const request = createPipelineRequest({ url, method: "GET" });
  return { request, status, headers: createHttpHeaders(headers), readableStreamBody: body ? Readable.from([]) : undefined };
}

describe("readBlobDownload: which answers can be resumed, and the bytes they carry", () => {
  it.each([
    ["a whole blob (200)", 200, { etag: ETAG, "content-length": "1000" }, { etag: ETAG, start: 0, end: 999 }],
    ["a range (206)", 206, { etag: ETAG, "content-length": "500", "content-range": "bytes 100-599/1000" }, { etag: ETAG, start: 100, end: 599 }],
    ["a range of a blob of unknown size", 206, { etag: ETAG, "content-length": "10", "content-range": "bytes 0-9/*" }, { etag: ETAG, start: 0, end: 9 }],
    ["a Content-Range that disagrees with Content-Length", 206, { etag: ETAG, "content-length": "400", "content-range": "bytes 100-599/1000" }, undefined],
    ["a 206 without Content-Range", 206, { etag: ETAG, "content-length": "500" }, undefined],
    ["an empty blob", 200, { etag: ETAG, "content-length": "0" }, undefined],
    ["a Content-Length that is not a number", 200, { etag: ETAG, "content-length": "12abc" }, undefined],
    ["no ETag", 200, { "content-length": "1000" }, undefined],
    ["a failure", 404, { etag: ETAG, "content-length": "100" }, undefined],
  ] as const)("%s", (_name, status, headers, expected) => {
    const answer = answerOf(status, headers);
    expect(readBlobDownload(answer.request, answer)).toEqual(expected);
  });
});

describe("aimAtRest", () => {
  it("sets x-ms-range from the position to the first answer's last byte and If-Match, and drops a Range of the caller's", () => {
    const request = createPipelineRequest({ url, method: "GET" });
    request.headers.set("Range", "bytes=100-599");
    aimAtRest(request, { etag: ETAG, start: 100, end: 599 }, 350);
    expect(request.headers.get("x-ms-range")).toBe("bytes=350-599");
    expect(request.headers.get("if-match")).toBe(ETAG);
    expect(request.headers.has("range")).toBe(false);
  });
});

describe("resumedAnswerProblem: the answer for the rest continues the body only when it is exactly that", () => {
  const download: BlobDownload = { etag: ETAG, start: 0, end: 999 };
  const rest = { etag: ETAG, "content-length": "600", "content-range": "bytes 400-999/1000" };
  it("the right 206: no problem", () => {
    expect(resumedAnswerProblem(download, 400, answerOf(206, rest))).toBeUndefined();
  });
  it.each([
    ["412 ConditionNotMet (changed)", 412, "ConditionNotMet"],
    ["404 (deleted)", 404, "BlobNotFound"],
  ] as const)("%s: the service's RestError, as any If-Match download gets it", (_name, status, code) => {
    const problem = resumedAnswerProblem(download, 400, answerOf(status, { "x-ms-error-code": code }, false));
    expect(problem).toMatchObject({ name: "RestError", statusCode: status, code });
  });
  it.each([
    ["another ETag", 206, { ...rest, etag: '"0x2"' }],
    ["a 200 (the range ignored)", 200, { etag: ETAG, "content-length": "1000" }],
    ["another start", 206, { ...rest, "content-range": "bytes 300-999/1000", "content-length": "700" }],
    ["another end", 206, { ...rest, "content-range": "bytes 400-899/1000", "content-length": "500" }],
  ] as const)("%s: DOWNLOAD_RANGE_MISMATCH", (_name, status, headers) => {
    expect(resumedAnswerProblem(download, 400, answerOf(status, headers))).toMatchObject({ code: "DOWNLOAD_RANGE_MISMATCH" });
  });
  it("a 503 after the retries: the service's status and a checked code, not its text", () => {
    const problem = resumedAnswerProblem(download, 400, answerOf(503, { "x-ms-error-code": "Server Busy <script>" }, false));
    expect(problem).toMatchObject({ name: "RestError", statusCode: 503, code: "<unrecognised>" });
    expect((problem as Error).message).not.toContain("script");
  });
});

describe("ResumingBody keeps memory bounded", () => {
  it("pauses its source while nobody reads: it holds about one buffer, not the blob", async () => {
    const chunk = Buffer.alloc(64 * 1024);
    const total = 256; // 16 MB on offer
    let produced = 0;
    const source = new Readable({
      highWaterMark: 64 * 1024,
      read() {
        produced += 1;
        this.push(produced > total ? null : chunk);
      },
    });
    const body = new ResumingBody(source, { etag: ETAG, start: 0, end: total * chunk.length - 1 }, {
      resume: () => Promise.reject(new Error("not cut")),
      callerAborted: () => false,
      failed: () => undefined,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Without backpressure the whole 16 MB would have been pulled into memory by now.
    expect(produced).toBeLessThan(8);
    expect(body.readableLength).toBeLessThanOrEqual(2 * chunk.length);
    let read = 0;
    for await (const part of body) read += (part as Buffer).length;
    expect(read).toBe(total * chunk.length);
  });
});
