import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setLogLevel } from "@azure/logger";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { resilientRetryPolicy } from "../../../src/index.js";
import { createRetryLogObserver } from "../../../src/observers/retryLogObserver.js";
import { captureAzureLog, type AzureLogCapture } from "../../support/captureAzureLog.js";

// The retry log through @azure/logger: what AZURE_LOG_LEVEL=info shows, with a stubbed `next`.

const SAS = "sv=2024-08-04&ss=b&srt=o&sp=rw&se=2030-01-01T00%3A00%3A00Z&sig=c2VjcmV0LXNpZ25hdHVyZQ%3D%3D";
let lines: string[];
let logCapture: AzureLogCapture;

beforeEach(() => {
  logCapture = captureAzureLog("info");
  lines = logCapture.lines;
});

afterEach(() => {
  logCapture.stop();
});

function request(url: string, method: "PUT" | "GET" | "POST" = "PUT"): PipelineRequest {
  const r = createPipelineRequest({ url, method, body: "payload" });
  r.headers.set("authorization", "SharedKey myacct:c2lnbmF0dXJl");
  return r;
}

/** A `next` that answers the given statuses in turn (with `x-ms-error-code` when given). */
function answers(...statuses: Array<[number, string?]>): SendRequest {
  let i = 0;
  return async (req) => {
    const [status, code] = statuses[Math.min(i++, statuses.length - 1)] ?? [200];
    const headers = createHttpHeaders(code ? { "x-ms-error-code": code } : {});
    return { request: req, status, headers } as PipelineResponse;
  };
}

const ours = () => lines.filter((l) => l.includes("azure:storage-resilience"));

describe("retry log observer", () => {
  it("logs operation, scope, attempt, class, status, code, delay and source at info; no URL, query or credentials", async () => {
    const policy = resilientRetryPolicy({
      retry: { strategy: "fixed", maxRetries: 3, delayInMs: 1 },
      observers: [createRetryLogObserver({ service: "blob" })],
    });
    const req = request(`https://myacct.blob.core.windows.net/photos/cat.jpg?${SAS}`);
    await policy.sendRequest(req, answers([503, "ServerBusy"], [500, "OperationTimedOut"], [201]));
    const retries = ours().filter((l) => l.includes("Retrying: operation="));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toContain(
      'azure:storage-resilience:info Retrying: operation=upload_blob scope="blob|myacct|photos|cat.jpg" attempt=1 class=throttled status=503 errorCode=ServerBusy delayInMs=1 delaySource=backoff',
    );
    expect(retries[1]).toContain("attempt=2 class=timeout status=500 errorCode=OperationTimedOut");
    expect(ours().find((l) => l.includes("Operation ended:"))).toContain("attempts=3 stopReason=success finalClass=success");
    for (const line of lines) {
      expect(line).not.toMatch(/sig=|c2VjcmV0|SharedKey|authorization|https?:\/\//i);
    }
  });

  it("logs why an operation was not retried", async () => {
    const policy = resilientRetryPolicy({ observers: [createRetryLogObserver({ service: "queue" })] });
    await policy.sendRequest(request("https://myacct.queue.core.windows.net/orders/messages", "GET"), answers([403, "AuthorizationFailure"]));
    expect(ours().find((l) => l.includes("Operation ended:"))).toContain(
      'operation=receive_messages scope="queue|myacct|orders" attempts=1 stopReason=permanent finalClass=permanent',
    );
  });

  it("says nothing about an operation that succeeded at once, and nothing below its level", async () => {
    const policy = resilientRetryPolicy({ retry: { strategy: "fixed", delayInMs: 1 }, observers: [createRetryLogObserver()] });
    await policy.sendRequest(request("https://myacct.blob.core.windows.net/photos/cat.jpg"), answers([201]));
    expect(ours().filter((l) => l.includes("Operation ended:"))).toEqual([]);
    setLogLevel("warning");
    await policy.sendRequest(request("https://myacct.blob.core.windows.net/photos/cat.jpg"), answers([503], [201]));
    expect(ours().filter((l) => l.includes("Retrying: operation="))).toEqual([]);
  });

  it("detects the service from the host when not told", async () => {
    const policy = resilientRetryPolicy({ retry: { strategy: "fixed", delayInMs: 1 }, observers: [createRetryLogObserver()] });
    await policy.sendRequest(request("https://myacct.queue.core.windows.net/orders/messages?visibilitytimeout=30", "POST"), answers([503], [201]));
    expect(ours().find((l) => l.includes("Retrying: operation="))).toContain('operation=send_message scope="queue|myacct|orders"');
  });

  it.each([
    ["echoes the request's SAS signature", `Throttled; ${SAS}`],
    ["is too long to be a code", "E".repeat(65)],
    ["holds a newline", "ServerBusy\nazure:storage-resilience:info forged line"],
    ["holds quotes and spaces", 'ServerBusy" stopReason="success'],
  ])("logs a server error code that %s as <unrecognised>", async (_why, hostileCode) => {
    const policy = resilientRetryPolicy({
      retry: { strategy: "fixed", maxRetries: 1, delayInMs: 1 },
      observers: [createRetryLogObserver({ service: "blob" })],
    });
    const hostile: SendRequest = async (req) => {
      // Headers cannot hold a newline on the wire, but a response object in the pipeline can.
      const headers = createHttpHeaders();
      headers.set("x-ms-error-code", hostileCode);
      return { request: req, status: 503, headers } as PipelineResponse;
    };
    await policy.sendRequest(request(`https://myacct.blob.core.windows.net/photos/cat.jpg?${SAS}`), hostile);
    const retry = ours().find((l) => l.includes("Retrying: operation="));
    expect(retry).toContain('class=throttled status=503 errorCode="<unrecognised>"');
    for (const line of lines) {
      expect(line).not.toMatch(/sig=|c2VjcmV0|forged|stopReason="success/);
      expect(line).not.toContain(hostileCode);
    }
  });

  it("keeps a code of 64 characters from the safe set", async () => {
    const code = "A".repeat(60) + "-1.x";
    const policy = resilientRetryPolicy({ retry: { strategy: "fixed", maxRetries: 1, delayInMs: 1 }, observers: [createRetryLogObserver()] });
    await policy.sendRequest(request("https://myacct.blob.core.windows.net/photos/cat.jpg"), answers([503, code], [201]));
    expect(ours().find((l) => l.includes("Retrying: operation="))).toContain(`errorCode=${code} `);
  });
});
