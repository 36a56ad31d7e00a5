import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createHttpHeaders, createPipelineRequest, RestError, type PipelineRequest, type PipelineResponse, type SendRequest } from "@azure/core-rest-pipeline";
import { createRetryBudget, fixedBackoff, getRetryInfo, resilientRetryPolicy, type RetryObserver } from "../../../src/index.js";
import { SEND_NOW, type Admission, type AdmissionRequest, type AttemptGate } from "../../../src/breaker/attemptGate.js";
import { resolveSecondaryReads } from "../../../src/policies/secondaryReads.js";
import { secondaryUrlOf } from "../../../src/address/secondaryUrl.js";
import type { RequestAddress } from "../../../src/address/requestAddress.js";
import { asGateOption, waitOf } from "../../support/scriptedGate.js";

const PRIMARY = "https://acct.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";
const SECONDARY = "https://acct-secondary.table.core.windows.net/orders(PartitionKey='p1',RowKey='r1')";

describe("secondaryUrlOf", () => {
  it.each([
    // Host-style: the first host label gets the suffix; path, query and SAS unchanged byte for byte.
    [PRIMARY, SECONDARY],
    ["https://acct.blob.core.windows.net/c/a%20b.txt?sv=1&sig=x%2By", "https://acct-secondary.blob.core.windows.net/c/a%20b.txt?sv=1&sig=x%2By"],
    ["https://acct.queue.core.chinacloudapi.cn/q/messages?peekonly=true", "https://acct-secondary.queue.core.chinacloudapi.cn/q/messages?peekonly=true"],
    // Path-style (Azurite): the account segment gets it.
    ["http://127.0.0.1:10002/devstoreaccount1/orders()?$filter=PartitionKey%20eq%20'p'", "http://127.0.0.1:10002/devstoreaccount1-secondary/orders()?$filter=PartitionKey%20eq%20'p'"],
    ["http://localhost:10000/devstoreaccount1/c/b", "http://localhost:10000/devstoreaccount1-secondary/c/b"],
    ["http://127.0.0.1:10000/devstoreaccount1?comp=list", "http://127.0.0.1:10000/devstoreaccount1-secondary?comp=list"],
  ])("%s → %s", (primary, secondary) => {
    expect(secondaryUrlOf(primary, undefined)).toBe(secondary);
  });

  it.each([
    ["a custom domain", "https://storage.example.com/c/b"],
    ["Cosmos DB's Table API", "https://acct.table.cosmos.azure.com/orders()"],
    ["a URL already on the secondary", SECONDARY],
    ["a path-style URL already on the secondary", "http://127.0.0.1:10002/devstoreaccount1-secondary/orders()"],
    ["not a URL", "orders()"],
    ["ftp", "ftp://acct.blob.core.windows.net/c/b"],
  ])("is undefined for %s", (_what, primary) => {
    expect(secondaryUrlOf(primary, undefined)).toBeUndefined();
  });

  it("with an endpoint given, takes any host's origin as the account root (a custom domain, a private link)", () => {
    expect(secondaryUrlOf("https://storage.example.com/c/b?sv=1", "https://storage-secondary.example.com")).toBe("https://storage-secondary.example.com/c/b?sv=1");
    expect(secondaryUrlOf("https://acct.table.cosmos.azure.com/orders()", "https://reads.example.com")).toBe("https://reads.example.com/orders()");
  });

  it("puts a given endpoint in place of the account root", () => {
    expect(secondaryUrlOf(PRIMARY, "https://reads.example.com")).toBe("https://reads.example.com/orders(PartitionKey='p1',RowKey='r1')");
    expect(secondaryUrlOf("http://127.0.0.1:10002/devstoreaccount1/orders()?x=1", "http://127.0.0.1:9/devstoreaccount1-secondary")).toBe(
      "http://127.0.0.1:9/devstoreaccount1-secondary/orders()?x=1",
    );
  });
});

describe("resolveSecondaryReads", () => {
  it("is off for undefined and false, on for true and objects", () => {
    expect(resolveSecondaryReads(undefined)).toBeUndefined();
    expect(resolveSecondaryReads(false)).toBeUndefined();
    expect(resolveSecondaryReads(true)).toEqual({ endpoint: undefined });
    expect(resolveSecondaryReads({ endpoint: "https://acct-secondary.blob.core.windows.net/" })).toEqual({ endpoint: "https://acct-secondary.blob.core.windows.net" });
  });

  it.each([
    [null, /secondaryReads must be a boolean or an options object.*got null/],
    ["yes", /secondaryReads must be a boolean or an options object.*got "yes"/],
    [{ endpiont: "x" }, /secondaryReads\.endpiont is not a known option/],
    [{ endpoint: null }, /secondaryReads\.endpoint must be an http\(s\) URL string; got null/],
    [{ endpoint: "not a url" }, /secondaryReads\.endpoint must be an absolute http\(s\) URL; got a string of 9 characters that is not one\./],
    [{ endpoint: "x?sig=s3cr3tS1gnatur3" }, /^(?!.*s3cr3t).*secondaryReads\.endpoint must be an absolute http\(s\) URL/],
    [{ endpoint: "ftp://acct-secondary.blob.core.windows.net" }, /secondaryReads\.endpoint must be an http\(s\) URL; got protocol "ftp:"/],
  ])("refuses %j", (option, message) => {
    expect(() => resolveSecondaryReads(option)).toThrow(TypeError);
    expect(() => resolveSecondaryReads(option)).toThrow(message);
  });

  it("refuses an endpoint with a query without echoing it (it could hold a SAS)", () => {
    const error = (() => {
      try {
        resolveSecondaryReads({ endpoint: "https://acct-secondary.blob.core.windows.net/?sig=SECRET" });
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    expect(error?.message).toMatch(/without query/);
    expect(error?.message).not.toContain("SECRET");
  });

  it("is validated when the policy is made", () => {
    expect(() => resilientRetryPolicy({ secondaryReads: null as never })).toThrow(/secondaryReads must be/);
  });
});

function reply(req: PipelineRequest, status: number, headers: Record<string, string> = {}): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders(headers) };
}

/** A transport answering by location: the primary with `primary`, the secondary with `secondary`; it logs each URL it saw. */
function transport(primary: (req: PipelineRequest) => PipelineResponse | Error, secondary: (req: PipelineRequest) => PipelineResponse | Error) {
  const urls: string[] = [];
  const next = vi.fn<SendRequest>(async (req) => {
    urls.push(req.url);
    const result = req.url.startsWith("https://acct-secondary.") ? secondary(req) : primary(req);
    if (result instanceof Error) throw result;
    return result;
  });
  return { next, urls };
}

const busy = (req: PipelineRequest) => reply(req, 503, { "x-ms-error-code": "ServerBusy" });
const ok = (req: PipelineRequest) => reply(req, 200);
const notFound = (req: PipelineRequest) => reply(req, 404, { "x-ms-error-code": "ResourceNotFound" });

/**
 * A gate whose partition serves nothing for the first `refusals` asks: each waits for the next
 * probe, 1 s away, or is refused when the caller may not wait that long. Logs the scope keys it is told about.
 */
function openCircuitGate(refusals: number) {
  const admitted: string[] = [];
  const recorded: string[] = [];
  let left = refusals;
  const gate: AttemptGate = {
    admit(address: RequestAddress, ask: AdmissionRequest): Admission {
      admitted.push(address.scopeKey ?? "none");
      if (left <= 0) return SEND_NOW;
      left -= 1;
      if (ask.queueForInMs >= 1000) return waitOf("circuit", 1000);
      return { decision: "refuse", reason: "circuit-open", scope: address.scopeKey ?? "", retryAfterInMs: 1000 };
    },
    record(address: RequestAddress): void {
      recorded.push(address.scopeKey ?? "none");
    },
  };
  return { gate, admitted, recorded };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("resilientRetryPolicy with secondaryReads", () => {
  const retry = fixedBackoff({ maxRetries: 3, delayInMs: 100 });

  it("reads the secondary right after the primary failed as a moving partition fails, before the backoff", async () => {
    const { next, urls } = transport(busy, ok);
    const req = createPipelineRequest({ url: PRIMARY, method: "GET" });
    const response = await resilientRetryPolicy({ retry, secondaryReads: true }).sendRequest(req, next);
    expect(response.status).toBe(200);
    expect(urls).toEqual([PRIMARY, SECONDARY]);
    // The request is the primary's again: the SDK, the read-back and the address reader see its own URL.
    expect(req.url).toBe(PRIMARY);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, classes: ["throttled", "success"], secondaryAttempts: 1, answeredBySecondary: true, stopReason: "success" });
  });

  it("sends a read refused by an open circuit to the secondary instead of waiting, and tells the gate nothing of it", async () => {
    const { gate, admitted, recorded } = openCircuitGate(Infinity);
    const { next, urls } = transport(ok, ok);
    const response = await resilientRetryPolicy({ retry, gate: asGateOption(gate), secondaryReads: true }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    expect(response.status).toBe(200);
    expect(urls).toEqual([SECONDARY]);
    // The scope stays the primary's (the account without -secondary), and the breaker learns nothing from the secondary.
    expect(admitted).toEqual(["table|acct|orders|p1"]);
    expect(recorded).toEqual([]);
  });

  it("never sends a write to the secondary", async () => {
    for (const method of ["PUT", "POST", "PATCH", "DELETE", "MERGE"] as const) {
      const { next, urls } = transport(busy, ok);
      const pending = resilientRetryPolicy({ retry, secondaryReads: true }).sendRequest(createPipelineRequest({ url: PRIMARY, method: method as "PUT", body: "{}" }), next);
      const settled = pending.then((r) => r.status, () => "threw");
      await vi.runAllTimersAsync();
      expect(await settled).toBe(503);
      expect(urls.every((u) => u === PRIMARY)).toBe(true);
      expect(urls).toHaveLength(4);
    }
  });

  it("does nothing differently when off: the primary only", async () => {
    const { next, urls } = transport(busy, ok);
    const pending = resilientRetryPolicy({ retry }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    const settled = pending.then((r) => r.status);
    await vi.runAllTimersAsync();
    expect(await settled).toBe(503);
    expect(urls).toEqual([PRIMARY, PRIMARY, PRIMARY, PRIMARY]);
  });

  it("does not trust the secondary's 404 (it lags): back to the primary, and never the secondary again in this operation", async () => {
    let primaryCalls = 0;
    const { next, urls } = transport((req) => (++primaryCalls < 3 ? busy(req) : notFound(req)), notFound);
    const pending = resilientRetryPolicy({ retry, secondaryReads: true }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    const settled = pending.then((r) => r);
    await vi.runAllTimersAsync();
    const response = await settled;
    expect(urls).toEqual([PRIMARY, SECONDARY, PRIMARY, PRIMARY]);
    // The 404 the caller gets is the primary's own.
    expect(response.status).toBe(404);
    expect(getRetryInfo(response)).toMatchObject({ classes: ["throttled", "permanent", "throttled", "permanent"], secondaryAttempts: 1 });
    expect(getRetryInfo(response)?.answeredBySecondary).toBeUndefined();
  });

  it("alternates while the secondary fails too, and surfaces the primary's last failure", async () => {
    const reset = () => new RestError("socket hang up", { code: "ECONNRESET" });
    const { next, urls } = transport(busy, reset);
    const pending = resilientRetryPolicy({ retry, secondaryReads: true }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    const settled = pending.then((r) => r.status);
    await vi.runAllTimersAsync();
    expect(await settled).toBe(503);
    expect(urls).toEqual([PRIMARY, SECONDARY, PRIMARY, SECONDARY, PRIMARY, SECONDARY, PRIMARY]);
  });

  it("counts a secondary read against the retry budget once the operation has made an attempt", async () => {
    // One request deposits one token: the secondary read takes it, and the primary's retry finds none.
    const budget = createRetryBudget({ retryRatio: 1, minRetriesPerSecond: 0 });
    const { next, urls } = transport(busy, busy);
    const pending = resilientRetryPolicy({ retry, secondaryReads: true, retryBudget: budget }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    const settled = pending.then((r) => r);
    await vi.runAllTimersAsync();
    const response = await settled;
    expect(response.status).toBe(503);
    expect(urls).toEqual([PRIMARY, SECONDARY]);
    expect(getRetryInfo(response)?.stopReason).toBe("budget-exhausted");
  });

  it("tells observers which attempts read the secondary", async () => {
    const seen: Array<[string, boolean | undefined]> = [];
    const observer: RetryObserver = { onAttempt: (event) => seen.push([event.attemptClass, event.secondary]) };
    const { next } = transport(busy, ok);
    await resilientRetryPolicy({ retry, secondaryReads: true, observers: [observer] }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "HEAD" }), next);
    expect(seen).toEqual([
      ["throttled", undefined],
      ["success", true],
    ]);
  });

  it("uses the endpoint given", async () => {
    const urls: string[] = [];
    const next = vi.fn<SendRequest>(async (req) => {
      urls.push(req.url);
      return req.url.startsWith("https://reads.example.com") ? ok(req) : busy(req);
    });
    const response = await resilientRetryPolicy({ retry, secondaryReads: { endpoint: "https://reads.example.com/" } }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    expect(response.status).toBe(200);
    expect(urls).toEqual([PRIMARY, "https://reads.example.com/orders(PartitionKey='p1',RowKey='r1')"]);
  });

  // Found by a second reader (issue 18, item 5's review): each failed before its fix.
  it("leaves the primary its backoff before the deadline: the secondary read is cut short, and no attempt is sent past the deadline", async () => {
    const urls: string[] = [];
    const next = vi.fn<SendRequest>((req) => {
      urls.push(req.url);
      if (!req.url.startsWith("https://acct-secondary.")) return Promise.resolve(busy(req));
      // The secondary hangs until the attempt's signal ends it.
      return new Promise<PipelineResponse>((_resolve, reject) => req.abortSignal?.addEventListener("abort", () => reject(new Error("aborted")), { once: true }));
    });
    const started = Date.now();
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 300 }), maxElapsedInMs: 500, secondaryReads: true })
      .sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next)
      .then((r) => r);
    await vi.runAllTimersAsync();
    const response = await pending;
    expect(urls).toEqual([PRIMARY, SECONDARY]);
    expect(getRetryInfo(response)?.stopReason).toBe("deadline");
    expect(Date.now() - started).toBeLessThanOrEqual(500);
  });

  it("reads the secondary once while an open circuit keeps refusing, not at every re-ask", async () => {
    const { gate } = openCircuitGate(Infinity);
    const internalError = (req: PipelineRequest) => reply(req, 500, { "x-ms-error-code": "InternalError" });
    const { next, urls } = transport(ok, internalError);
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 2, delayInMs: 100 }), gate: asGateOption(gate), maxElapsedInMs: 2_000, secondaryReads: true, retryBudget: false })
      .sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next)
      .then((r) => r.status, (e: unknown) => e);
    await vi.runAllTimersAsync();
    await pending;
    expect(urls).toEqual([SECONDARY]);
  });

  it("stops reading the secondary after a permanent answer from it (403: no read access there)", async () => {
    const forbidden = (req: PipelineRequest) => reply(req, 403, { "x-ms-error-code": "AuthorizationFailure" });
    const { next, urls } = transport(busy, forbidden);
    const pending = resilientRetryPolicy({ retry, secondaryReads: true }).sendRequest(createPipelineRequest({ url: PRIMARY, method: "GET" }), next);
    const settled = pending.then((r) => r.status);
    await vi.runAllTimersAsync();
    expect(await settled).toBe(503);
    expect(urls).toEqual([PRIMARY, SECONDARY, PRIMARY, PRIMARY, PRIMARY]);
  });

  it("never sends a Queue Get Messages (a GET that dequeues) to the secondary", async () => {
    const queueUrl = "https://acct.queue.core.windows.net/jobs/messages?numofmessages=32";
    const urls: string[] = [];
    const next = vi.fn<SendRequest>(async (req) => {
      urls.push(req.url);
      return busy(req);
    });
    const pending = resilientRetryPolicy({ retry, secondaryReads: true, service: "queue" }).sendRequest(createPipelineRequest({ url: queueUrl, method: "GET" }), next);
    const settled = pending.then((r) => r.status);
    await vi.runAllTimersAsync();
    expect(await settled).toBe(503);
    expect(urls).toEqual([queueUrl, queueUrl, queueUrl, queueUrl]);
  });
});
