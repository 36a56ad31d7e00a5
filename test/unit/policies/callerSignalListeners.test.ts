import { getEventListeners } from "node:events";
import { PassThrough } from "node:stream";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { createHttpHeaders, createPipelineRequest, RestError, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, resilientRetryPolicy } from "../../../src/index.js";

// Each attempt with a per-attempt timeout links its own signal to the caller's by an "abort"
// listener on the caller's signal. A caller that shares one signal across its operations (a
// shutdown signal; the demo) must get every listener back, whatever the attempt's end, or the
// listeners pile up for the signal's life: a leak on any Node version.

const url = "https://acct.blob.core.windows.net/photos/cat.jpg";
const policy = () => resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 1, delayInMs: 1 }), tryTimeoutInMs: 1_000, maxElapsedInMs: 5_000 });
const listeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

function request(signal: AbortSignal): PipelineRequest {
  return createPipelineRequest({ url, method: "GET", abortSignal: signal });
}

function ok(req: PipelineRequest, body?: NodeJS.ReadableStream): PipelineResponse {
  return { request: req, status: 200, headers: createHttpHeaders({}), readableStreamBody: body };
}

/** The garbage collector, for a test that must see a dropped object go. */
function collector(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

describe("listeners on the caller's abort signal", () => {
  it("none left after operations that succeeded, failed, retried or timed out", async () => {
    const caller = new AbortController();
    const statuses = [200, 503, 500, 404];
    for (const status of statuses) {
      const next: SendRequest = async (req) => ({ request: req, status, headers: createHttpHeaders(status === 503 ? { "x-ms-error-code": "ServerBusy" } : {}) });
      await policy().sendRequest(request(caller.signal), next).catch(() => undefined);
    }
    await policy()
      .sendRequest(request(caller.signal), async () => {
        throw new RestError("reset", { code: "ECONNRESET" });
      })
      .catch(() => undefined);
    const short = resilientRetryPolicy({ retry: { strategy: "none" }, tryTimeoutInMs: 20 });
    const hang: SendRequest = (req) =>
      new Promise((_, reject) => req.abortSignal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" }))));
    await expect(short.sendRequest(request(caller.signal), hang)).rejects.toMatchObject({ code: "ETIMEDOUT" });
    expect(listeners(caller.signal)).toBe(0);
  });

  it("a streamed body keeps the caller's abort reaching it until it closes, then lets go", async () => {
    const caller = new AbortController();
    const body = new PassThrough();
    let attemptSignal: AbortSignal | undefined;
    const response = await policy().sendRequest(request(caller.signal), async (req) => {
      attemptSignal = req.abortSignal as AbortSignal;
      return ok(req, body);
    });
    expect(response.readableStreamBody).toBe(body);
    expect(listeners(caller.signal)).toBe(1); // still forwarding: the body is read after we return
    body.end("data");
    body.resume();
    await new Promise((resolve) => body.once("close", resolve));
    expect(listeners(caller.signal)).toBe(0);
    expect(attemptSignal?.aborted).toBe(false);
  });

  it("the caller's abort reaches a body still being read", async () => {
    const caller = new AbortController();
    let attemptSignal: AbortSignal | undefined;
    await policy().sendRequest(request(caller.signal), async (req) => {
      attemptSignal = req.abortSignal as AbortSignal;
      return ok(req, new PassThrough());
    });
    caller.abort();
    expect(attemptSignal?.aborted).toBe(true);
    expect(listeners(caller.signal)).toBe(0);
  });

  it("a body never read nor closed, then dropped, takes its listener with it", async () => {
    const gc = collector();
    const caller = new AbortController();
    for (let i = 0; i < 20; i++) {
      await policy().sendRequest(request(caller.signal), async (req) => ok(req, new PassThrough()));
    }
    expect(listeners(caller.signal)).toBe(20);
    for (let round = 0; round < 20 && listeners(caller.signal) > 1; round++) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // At most the last body may still be referenced from a stack slot; before the fix all 20 stayed.
    expect(listeners(caller.signal)).toBeLessThanOrEqual(1);
  });
});
