import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import nock from "nock";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, createPipelineRequest, type PipelineRequest, type SendRequest } from "@azure/core-rest-pipeline";
import { fixedBackoff, getRetryInfo, installResilience, resilientRetryPolicy, type RetryEvent } from "../../../src/index.js";
import { parseRetryAfterInMs } from "../../../src/timing/retryAfter.js";
import { DEVSTORE_ACCOUNT_KEY } from "../../../src/testing/azurite/devstoreAccount.js";

// Whatever a server sends, the policy neither crashes, nor waits longer than its caps, nor
// leaves a rejection unhandled. Retry-After values go through a stub `next`; hostile bodies
// through the real TableClient and nock.

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeAll(() => {
  process.on("unhandledRejection", onUnhandled);
});
afterAll(() => {
  process.off("unhandledRejection", onUnhandled);
});

const hostileRetryAfter = fc.oneof(
  fc.constantFrom(
    "-5",
    "-0",
    "0",
    "1e9",
    "1e400",
    "99999999999999999999999999999999",
    "abc",
    "",
    "   ",
    " 10 ",
    "1, 2",
    "0x10",
    "NaN",
    "Infinity",
    "Thu, 01 Jan 1970 00:00:00 GMT",
    "Fri, 31 Dec 9999 23:59:59 GMT",
    "Sun, 06 Nov 1994 08:49:37 GMT",
    "Wed, 21 Oct 2099 07:28:00 GMT",
    "\u0000\u0001",
    "１０",
  ),
  fc.string({ maxLength: 40 }),
  fc.double().map(String),
  fc.integer().map(String),
  fc.date({ noInvalidDate: true }).map((d) => d.toUTCString()),
);

describe("hostile Retry-After headers", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("parseRetryAfterInMs never returns a negative, NaN or infinite wait", () => {
    fc.assert(
      fc.property(hostileRetryAfter, hostileRetryAfter, hostileRetryAfter, (a, b, c) => {
        const headers = createHttpHeaders({ "retry-after": a, "retry-after-ms": b, "x-ms-retry-after-ms": c });
        const value = parseRetryAfterInMs(headers);
        if (value !== undefined) {
          expect(Number.isFinite(value)).toBe(true);
          expect(value).toBeGreaterThanOrEqual(0);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("every wait is capped by maxRetryAfterInMs (or the backoff), even with no deadline", async () => {
    await fc.assert(
      fc.asyncProperty(hostileRetryAfter, hostileRetryAfter, fc.integer({ min: 0, max: 60_000 }), async (retryAfter, ms, cap) => {
        const retries: RetryEvent[] = [];
        let calls = 0;
        const next = vi.fn<SendRequest>(async (req: PipelineRequest) => {
          calls += 1;
          const headers: Record<string, string> = calls === 1 ? { "x-ms-error-code": "ServerBusy", "retry-after": retryAfter, "x-ms-retry-after-ms": ms } : {};
          return { request: req, status: calls === 1 ? 503 : 200, headers: createHttpHeaders(headers) };
        });
        const policy = resilientRetryPolicy({
          retry: fixedBackoff({ maxRetries: 1, delayInMs: 50 }),
          maxRetryAfterInMs: cap,
          maxElapsedInMs: Infinity,
          observers: [{ onRetry: (e) => retries.push(e) }],
        });
        const pending = policy.sendRequest(createPipelineRequest({ url: "https://a.table.core.windows.net/t", method: "GET" }), next);
        await vi.advanceTimersByTimeAsync(Math.max(cap, 50));
        const response = await pending;
        expect(response.status).toBe(200);
        expect(retries).toHaveLength(1);
        expect(retries[0]!.delayInMs).toBeLessThanOrEqual(Math.max(cap, 50));
        expect(retries[0]!.delayInMs).toBeGreaterThanOrEqual(50);
      }),
      { numRuns: 300 },
    );
  });

  it("a strategy answering NaN, a negative or an absurd delay cannot park a request", async () => {
    for (const answer of [Number.NaN, -1, Infinity, 1e300]) {
      let calls = 0;
      const next = vi.fn<SendRequest>(async (req) => ({ request: req, status: ++calls === 1 ? 503 : 200, headers: createHttpHeaders({}) }));
      const retries: RetryEvent[] = [];
      const strategy = { kind: "fixed" as const, maxRetries: 1, maxDelayInMs: 100, delayInMs: () => answer };
      const pending = resilientRetryPolicy({ retry: strategy, maxElapsedInMs: Infinity, observers: [{ onRetry: (e) => retries.push(e) }] }).sendRequest(
        createPipelineRequest({ url: "https://a.table.core.windows.net/t", method: "GET" }),
        next,
      );
      await vi.advanceTimersByTimeAsync(24 * 3600_000);
      expect((await pending).status).toBe(200);
      expect(retries[0]!.delayInMs).toBeGreaterThanOrEqual(0);
      expect(retries[0]!.delayInMs).toBeLessThanOrEqual(24 * 3600_000);
    }
  });
});

describe("hostile error bodies through the real TableClient (nock)", () => {
  const origin = "http://hostile.table.core.windows.net";
  let client: TableClient;

  beforeAll(() => {
    nock.disableNetConnect();
  });
  afterAll(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });
  beforeEach(() => {
    client = new TableClient(origin, "orders", new AzureNamedKeyCredential("hostile", DEVSTORE_ACCOUNT_KEY), {
      allowInsecureConnection: true,
    });
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 2, delayInMs: 5 }, metrics: false, circuitBreaker: false });
  });
  afterEach(() => {
    expect(nock.pendingMocks()).toEqual([]);
    nock.cleanAll();
    expect(unhandled).toEqual([]);
  });

  const enormous = "x".repeat(5 * 1024 * 1024);
  const bodies: Array<[string, string, Record<string, string>]> = [
    ["empty", "", {}],
    ["truncated JSON", '{"odata.error":{"code":"ServerBusy","mess', { "content-type": "application/json" }],
    ["truncated XML", '<?xml version="1.0"?><Error><Code>Serv', { "content-type": "application/xml" }],
    ["HTML", "<html><body>502 Bad Gateway</body></html>", { "content-type": "text/html" }],
    ["JSON claiming XML", '{"a":1}', { "content-type": "application/xml" }],
    ["binary", "\u0000\u00ff\u00fe", { "content-type": "application/octet-stream" }],
    ["enormous", enormous, { "content-type": "application/json" }],
  ];

  it.each(bodies)("503 with a %s body, retried, then the same again: one clean rejection", async (_name, body, headers) => {
    nock(origin).post("/orders").times(3).reply(503, body, { "x-ms-error-code": "ServerBusy", ...headers });
    const error = await client.createEntity({ partitionKey: "p", rowKey: "r" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: "RestError", statusCode: 503 });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 3, stopReason: "retries-exhausted" });
  });

  it.each(bodies)("200 to a read with a %s body: rejected or resolved, never a crash", async (_name, body, headers) => {
    nock(origin).get(/.*/).reply(200, body, headers);
    await client.getEntity("p", "r").then(
      () => undefined,
      (e: unknown) => e,
    );
  });

  it("an ambiguous insert whose read-back answers garbage: the 409 surfaces, marked", async () => {
    nock(origin)
      .post("/orders")
      .replyWithError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))
      .post("/orders")
      .reply(409, "not json at all", { "x-ms-error-code": "EntityAlreadyExists" })
      .get("/orders(PartitionKey='p',RowKey='r')")
      .reply(200, '{"PartitionKey":"p","RowKey":', { "content-type": "application/json" });
    const error = await client.createEntity({ partitionKey: "p", rowKey: "r" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ statusCode: 409 });
    expect(getRetryInfo(error)).toMatchObject({ possiblyApplied: true, ambiguousWrite: "unresolved" });
  });

  it("an ambiguous insert whose read-back is enormous: unresolved, no crash", async () => {
    nock(origin)
      .post("/orders")
      .replyWithError(Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }))
      .post("/orders")
      .reply(409, "", { "x-ms-error-code": "EntityAlreadyExists" })
      .get("/orders(PartitionKey='p',RowKey='r')")
      .reply(200, `{"PartitionKey":"p","RowKey":"r","big":"${enormous}"}`, { "content-type": "application/json" });
    const error = await client.createEntity({ partitionKey: "p", rowKey: "r" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(getRetryInfo(error)).toMatchObject({ possiblyApplied: true, ambiguousWrite: "unresolved" });
  });
});
