import { describe, expect, it, vi } from "vitest";
import { Readable } from "node:stream";
import { createHttpHeaders, createPipelineRequest, RestError, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, resilientRetryPolicy, type RetryObserver } from "../../../src/index.js";
import { isResilienceError } from "../../../src/errors/resilienceError.js";

// A Get Blob answer whose body is cut mid-way: the policy asks for the rest of the range, as one
// more attempt of the same operation, on the first answer's ETag. `next` is a script; the bodies
// are streams that deliver some bytes, then fail as a reset connection does.

const url = "https://acct.blob.core.windows.net/photos/cat.jpg";
/** 1000 bytes that do not repeat with a short period, so a byte out of place shows. */
const BLOB = Buffer.from(Array.from({ length: 1000 }, (_, i) => (i * 7 + (i >> 8)) % 256));
const ETAG = '"0x8DCAFE"';

const reset = (): Error => Object.assign(new Error("aborted"), { code: "ECONNRESET" });

/** A body that delivers `bytes`, then fails with `error` (a reset connection, by default). */
function cutBody(bytes: Buffer, error: Error = reset()): Readable {
  const body = new Readable({ read() {} });
  body.push(bytes);
  setImmediate(() => body.destroy(error));
  return body;
}

/** A body that delivers `bytes` and ends. */
function wholeBody(bytes: Buffer): Readable {
  return Readable.from([bytes]);
}

function answer(request: PipelineRequest, status: number, headers: Record<string, string>, body?: Readable): PipelineResponse {
  return { request, status, headers: createHttpHeaders(headers), readableStreamBody: body };
}

/** The first answer: the whole blob (200), or `range` of it (206), whose body `body` makes. */
function firstAnswer(request: PipelineRequest, body: Readable, range?: { start: number; end: number }): PipelineResponse {
  if (range === undefined) return answer(request, 200, { etag: ETAG, "content-length": String(BLOB.length) }, body);
  const headers = { etag: ETAG, "content-length": String(range.end - range.start + 1), "content-range": `bytes ${range.start}-${range.end}/${BLOB.length}` };
  return answer(request, 206, headers, body);
}

/** A 206 for bytes start-end of the blob, as Azure answers a range. */
function rangeAnswer(request: PipelineRequest, start: number, end: number, body?: Readable, etag = ETAG): PipelineResponse {
  const headers = { etag, "content-length": String(end - start + 1), "content-range": `bytes ${start}-${end}/${BLOB.length}` };
  return answer(request, 206, headers, body ?? wholeBody(BLOB.subarray(start, end + 1)));
}

/** What each attempt carried, read when it was sent (the operation sends one request object again). */
interface Sent {
  range: string | undefined;
  ifMatch: string | undefined;
}

/** A `next` that answers from a script, one entry per attempt, and records what each attempt carried. */
function scripted(...steps: Array<(req: PipelineRequest) => PipelineResponse | Promise<PipelineResponse> | Error>) {
  const sent: Sent[] = [];
  const next = vi.fn<SendRequest>(async (req) => {
    sent.push({ range: req.headers.get("x-ms-range"), ifMatch: req.headers.get("if-match") });
    const step = steps.shift();
    if (!step) throw new Error("unexpected extra attempt");
    const result = await step(req);
    if (result instanceof Error) throw result;
    return result;
  });
  return { next, sent };
}

function download(init: { range?: string; abortSignal?: AbortSignal } = {}): PipelineRequest {
  const request = createPipelineRequest({ url, method: "GET", abortSignal: init.abortSignal, streamResponseStatusCodes: new Set([200, 206]) });
  if (init.range !== undefined) request.headers.set("x-ms-range", init.range);
  return request;
}

function policy(observers: RetryObserver[] = [], delayInMs = 1) {
  return resilientRetryPolicy({ service: "blob", retry: fixedBackoff({ maxRetries: 3, delayInMs }), observers });
}

/** Reads the whole body: the bytes that reached the caller, and the error that ended it, if any. */
async function readAll(body: NodeJS.ReadableStream | undefined): Promise<{ bytes: Buffer; error: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body as Readable) chunks.push(chunk as Buffer);
    return { bytes: Buffer.concat(chunks), error: undefined };
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error };
  }
}

describe("a blob download whose body is cut", () => {
  it("asks for the rest of the blob from the byte reached, on the first answer's ETag, and hands over every byte once, in order", async () => {
    const { next, sent } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(0, 400))),
      (req) => rangeAnswer(req, 400, 999),
    );
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(error).toBeUndefined();
    expect(bytes.equals(BLOB)).toBe(true);
    expect(sent).toEqual([
      { range: undefined, ifMatch: undefined },
      { range: "bytes=400-999", ifMatch: ETAG },
    ]);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, classes: ["success", "success"], resumes: 1, stopReason: "success" });
  });

  it("resumes an explicit range within it: the rest of that range, not of the blob", async () => {
    const { next, sent } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(100, 350)), { start: 100, end: 599 }),
      (req) => rangeAnswer(req, 350, 599),
    );
    const response = await policy().sendRequest(download({ range: "bytes=100-599" }), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(error).toBeUndefined();
    expect(bytes.equals(BLOB.subarray(100, 600))).toBe(true);
    expect(sent.map((s) => s.range)).toEqual(["bytes=100-599", "bytes=350-599"]);
  });

  it("resumes as often as it is cut (each cut is a retry), and a body that ends early without an error counts as cut", async () => {
    const endsEarly = Readable.from([BLOB.subarray(0, 200)]);
    const { next, sent } = scripted(
      (req) => firstAnswer(req, endsEarly),
      (req) => rangeAnswer(req, 200, 999, cutBody(BLOB.subarray(200, 700))),
      (req) => rangeAnswer(req, 700, 999),
    );
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(error).toBeUndefined();
    expect(bytes.equals(BLOB)).toBe(true);
    expect(sent.map((s) => s.range)).toEqual([undefined, "bytes=200-999", "bytes=700-999"]);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, resumes: 2 });
  });

  it("goes through the loop like any retry: the observers see the resume's retry and attempt, and the operation ends once", async () => {
    const events: string[] = [];
    const observer: RetryObserver = {
      onAttempt: (e) => events.push(`attempt ${e.attempt} ${e.attemptClass}`),
      onRetry: (e) => events.push(`retry after ${e.attempt} ${e.reason} ${e.delayInMs} ms`),
      onOperationEnd: (e) => events.push(`end ${e.stopReason}`),
    };
    const { next } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(0, 500))),
      () => new RestError("socket hang up", { code: "ECONNRESET" }),
      (req) => rangeAnswer(req, 500, 999),
    );
    const response = await policy([observer], 5).sendRequest(download(), next);
    expect((await readAll(response.readableStreamBody)).bytes.equals(BLOB)).toBe(true);
    expect(events).toEqual([
      "attempt 1 success",
      "end success",
      "retry after 1 transient 5 ms",
      "attempt 2 transient",
      "retry after 2 transient 5 ms",
      "attempt 3 success",
    ]);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, classes: ["success", "transient", "success"], resumes: 1 });
  });

  it("counts the deadline again from the cut: a body read for longer than maxElapsedInMs is still resumed", async () => {
    const slowCut = new Readable({ read() {} });
    slowCut.push(BLOB.subarray(0, 400));
    setTimeout(() => slowCut.destroy(reset()), 150);
    const { next } = scripted(
      (req) => firstAnswer(req, slowCut),
      (req) => rangeAnswer(req, 400, 999),
    );
    const shortDeadline = resilientRetryPolicy({ service: "blob", retry: fixedBackoff({ maxRetries: 3, delayInMs: 1 }), maxElapsedInMs: 100 });
    const response = await shortDeadline.sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(error).toBeUndefined();
    expect(bytes.equals(BLOB)).toBe(true);
  });

  it("stops when the retries are spent, with the last failure, the bytes before the cut delivered and nothing else", async () => {
    const hangUp = () => new RestError("socket hang up", { code: "ECONNRESET" });
    const { next } = scripted((req) => firstAnswer(req, cutBody(BLOB.subarray(0, 300))), hangUp, hangUp, hangUp);
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(bytes.equals(BLOB.subarray(0, 300))).toBe(true);
    expect((error as RestError).code).toBe("ECONNRESET");
    expect(getRetryInfo(error)).toMatchObject({ attempts: 4, resumes: 1, stopReason: "retries-exhausted" });
  });
});

describe("a blob changed between the cut and the resume", () => {
  it("fails with the service's 412 ConditionNotMet when the resumed request's If-Match is refused: no byte of the new version", async () => {
    const { next, sent } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(0, 400))),
      (req) => ({ request: req, status: 412, headers: createHttpHeaders({ "x-ms-error-code": "ConditionNotMet" }), bodyAsText: "<Error/>" }),
    );
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(bytes.equals(BLOB.subarray(0, 400))).toBe(true);
    expect(error).toMatchObject({ name: "RestError", statusCode: 412, code: "ConditionNotMet" });
    expect(sent[1]?.ifMatch).toBe(ETAG);
    // What happened, read from the error as from the response: a resume, refused.
    expect(getRetryInfo(error)).toMatchObject({ attempts: 2, resumes: 1, classes: ["success", "permanent"], stopReason: "permanent" });
    expect(getRetryInfo(error)).toBe(getRetryInfo(response));
  });

  it("fails with DOWNLOAD_RANGE_MISMATCH when an answer carries another ETag, and reads none of its body", async () => {
    const otherVersion = wholeBody(Buffer.alloc(600, 0xee));
    const { next } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(0, 400))),
      (req) => rangeAnswer(req, 400, 999, otherVersion, '"0x8DBEEF"'),
    );
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(bytes.equals(BLOB.subarray(0, 400))).toBe(true);
    expect(isResilienceError(error) && error.code).toBe("DOWNLOAD_RANGE_MISMATCH");
    expect((error as Error).message).toContain("another version (ETag)");
    expect(otherVersion.destroyed).toBe(true);
  });

  it("fails with DOWNLOAD_RANGE_MISMATCH when the answer is not the range asked for (a 200 for the whole blob)", async () => {
    const { next } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(0, 400))),
      (req) => firstAnswer(req, wholeBody(BLOB)),
    );
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(bytes.length).toBe(400);
    expect(isResilienceError(error) && error.code).toBe("DOWNLOAD_RANGE_MISMATCH");
  });

  it("never passes on bytes past those announced", async () => {
    const { next } = scripted((req) => firstAnswer(req, wholeBody(Buffer.concat([BLOB, Buffer.alloc(10)]))));
    const response = await policy().sendRequest(download(), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect(bytes.length).toBeLessThanOrEqual(BLOB.length);
    expect(isResilienceError(error) && error.code).toBe("DOWNLOAD_RANGE_MISMATCH");
  });
});

describe("the caller's abort", () => {
  it("during the resume's backoff ends the body at once with an AbortError, and nothing more is sent", async () => {
    const controller = new AbortController();
    const { next } = scripted((req) => firstAnswer(req, cutBody(BLOB.subarray(0, 400))));
    // A 30 s backoff (within the 60 s deadline): the test would time out if the abort did not end it.
    const response = await policy([], 30_000).sendRequest(download({ abortSignal: controller.signal }), next);
    const reading = readAll(response.readableStreamBody);
    await new Promise((resolve) => setTimeout(resolve, 20)); // the cut has come, the backoff runs
    const abortedAt = performance.now();
    controller.abort();
    const { bytes, error } = await reading;
    expect(performance.now() - abortedAt).toBeLessThan(1_000);
    expect((error as Error).name).toBe("AbortError");
    expect(bytes.length).toBe(400);
    expect(next).toHaveBeenCalledTimes(1);
    expect(getRetryInfo(response)).toMatchObject({ resumes: 1, stopReason: "aborted" });
  });

  it("while the resumed request is in flight ends the body with an AbortError", async () => {
    const controller = new AbortController();
    const { next } = scripted(
      (req) => firstAnswer(req, cutBody(BLOB.subarray(0, 400))),
      (req) =>
        new Promise<PipelineResponse>((_resolve, reject) => {
          req.abortSignal?.addEventListener("abort", () => reject(Object.assign(new Error("The operation was aborted."), { name: "AbortError" })));
          setTimeout(() => controller.abort(), 5);
        }),
    );
    const response = await policy().sendRequest(download({ abortSignal: controller.signal }), next);
    const { bytes, error } = await readAll(response.readableStreamBody);
    expect((error as Error).name).toBe("AbortError");
    expect(bytes.length).toBe(400);
    expect(next).toHaveBeenCalledTimes(2);
  });

  it("while the first body is read is not taken for a cut: AbortError, no resume", async () => {
    const controller = new AbortController();
    const body = new Readable({ read() {} });
    body.push(BLOB.subarray(0, 400));
    const { next } = scripted((req) => firstAnswer(req, body));
    const response = await policy().sendRequest(download({ abortSignal: controller.signal }), next);
    const reading = readAll(response.readableStreamBody);
    setImmediate(() => {
      controller.abort();
      body.destroy(reset()); // what the transport does to the body of an aborted request
    });
    const { error } = await reading;
    expect((error as Error).name).toBe("AbortError");
    expect(next).toHaveBeenCalledTimes(1);
    expect(getRetryInfo(response)?.resumes).toBeUndefined();
  });
});

describe("answers whose body is left as it is", () => {
  it.each([
    ["no ETag", { "content-length": "1000" }],
    ["no Content-Length", { etag: ETAG }],
    ["a body the transport decompresses", { etag: ETAG, "content-length": "1000", "content-encoding": "gzip" }],
  ])("%s", async (_name, headers) => {
    const body = wholeBody(BLOB);
    const request = download();
    request.headers.set("accept-encoding", "gzip");
    const { next } = scripted((req) => answer(req, 200, headers, body));
    const response = await policy().sendRequest(request, next);
    expect(response.readableStreamBody).toBe(body);
  });

  it("a structured (CRC64-framed) body", async () => {
    const body = wholeBody(BLOB);
    const request = download();
    request.headers.set("x-ms-structured-body", "XSM/1.0; properties=crc64");
    const { next } = scripted((req) => firstAnswer(req, body));
    expect((await policy().sendRequest(request, next)).readableStreamBody).toBe(body);
  });

  it("a GET that is not Get Blob (a container listing streamed by a custom request)", async () => {
    const body = wholeBody(BLOB);
    const request = createPipelineRequest({ url: "https://acct.blob.core.windows.net/photos?restype=container&comp=list", method: "GET" });
    const { next } = scripted((req) => firstAnswer(req, body));
    expect((await policy().sendRequest(request, next)).readableStreamBody).toBe(body);
  });
});
