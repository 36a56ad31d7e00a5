import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  RestError,
  type HttpClient,
  type PipelinePolicy,
  type PipelineRequest,
  type PipelineResponse,
  type SendRequest,
} from "@azure/core-rest-pipeline";
import { ambiguousWriteReadBackPolicy, createRetryBudget, fixedBackoff, getRetryInfo, resilientRetryPolicy, type AmbiguousWriteEvent, type ResilientRetryPolicyOptions } from "../../../src/index.js";
import { SEND_NOW, type AttemptGate } from "../../../src/breaker/attemptGate.js";
import { captureAzureLog } from "../../support/captureAzureLog.js";
import { asGateOption, waitOf } from "../../support/scriptedGate.js";

const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
const entity = `${table}(PartitionKey='p',RowKey='r')`;
const sentBody = JSON.stringify({ PartitionKey: "p", RowKey: "r", n: 1 });
const storedBody = JSON.stringify({ "odata.etag": 'W/"datetime\'1\'"', PartitionKey: "p", RowKey: "r", Timestamp: "2026-01-01T00:00:00Z", n: 1 });

function reply(req: PipelineRequest, status: number, headers: Record<string, string> = {}, bodyAsText?: string): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders(headers), bodyAsText };
}
const reset = () => new RestError("socket hang up", { code: "ECONNRESET" });

type Step = (req: PipelineRequest) => PipelineResponse | Error | Promise<PipelineResponse>;

/** A stub HttpClient answering from a script and recording what went out (method, url, authorization). */
function httpClient(...steps: Step[]) {
  const sent: Array<{ method: string; url: string; authorization: string | undefined }> = [];
  const client: HttpClient = {
    async sendRequest(req) {
      sent.push({ method: req.method, url: req.url, authorization: req.headers.get("authorization") });
      const step = steps.shift();
      if (!step) throw new Error(`unexpected request ${req.method} ${req.url}`);
      const result = await step(req);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { client, sent };
}

/** A stand-in for the Tables credential policy: signs method and URL, before the Retry phase, like the SDK's. */
const signingPolicy: PipelinePolicy = {
  name: "tablesNamedKeyCredentialPolicy",
  sendRequest(req, next) {
    req.headers.set("authorization", `SharedKey devstoreaccount1:${req.method} ${req.url}`);
    return next(req);
  },
};

/** A hand-built pipeline: the read-back policy (unless left out) and the retry policy given that policy. */
function pipelineWith(options: ResilientRetryPolicyOptions, withReadBack = true) {
  const readBackPolicy = ambiguousWriteReadBackPolicy();
  const pipeline = createEmptyPipeline();
  if (withReadBack) pipeline.addPolicy(readBackPolicy, { phase: "Serialize" });
  pipeline.addPolicy(signingPolicy);
  const { ambiguousWrites } = options;
  const wired = ambiguousWrites ? { ...(ambiguousWrites === true ? {} : ambiguousWrites), readBackPolicy } : ambiguousWrites;
  pipeline.addPolicy(resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }), ...options, ambiguousWrites: wired }), { phase: "Retry" });
  return pipeline;
}

function insert(): PipelineRequest {
  return createPipelineRequest({
    url: table,
    method: "POST",
    body: sentBody,
    headers: createHttpHeaders({ prefer: "return-no-content", "x-ms-version": "2019-02-02", "x-ms-client-request-id": "c1" }),
  });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("ambiguous writes in the retry policy", () => {
  it("reads back through the signing policy: the GET carries its own signature, not the POST's", async () => {
    const events: AmbiguousWriteEvent[] = [];
    const http = httpClient(reset, (r) => reply(r, 409, { "x-ms-error-code": "EntityAlreadyExists" }), (r) =>
      reply(r, 200, { etag: 'W/"datetime\'1\'"', "x-ms-request-id": "rid", date: "Sat, 21 Nov 2026 00:00:00 GMT" }, storedBody),
    );
    const pending = pipelineWith({ ambiguousWrites: true, observers: [{ onAmbiguousWrite: (e) => events.push(e) }] }).sendRequest(
      http.client,
      insert(),
    );
    await vi.advanceTimersByTimeAsync(10);
    const response = await pending;
    expect(http.sent.map((s) => s.method)).toEqual(["POST", "POST", "GET"]);
    const get = http.sent[2]!;
    expect(get.url).toBe(entity);
    expect(get.authorization).toBe(`SharedKey devstoreaccount1:GET ${entity}`);
    expect(response.status).toBe(204);
    expect(response.headers.get("etag")).toBe('W/"datetime\'1\'"');
    expect(response.headers.get("preference-applied")).toBe("return-no-content");
    expect(response.headers.get("x-ms-client-request-id")).toBe("c1");
    expect(getRetryInfo(response)).toMatchObject({ stopReason: "success", ambiguousWrite: "applied", possiblyApplied: false, unknownOutcomes: 1 });
    expect(events).toMatchObject([{ operation: "insert_entity", result: "applied", unknownOutcomes: 1 }]);
  });

  it("an insert without Prefer gets 201 with the stored entity", async () => {
    const http = httpClient(reset, (r) => reply(r, 409), (r) => reply(r, 200, { etag: "e" }, storedBody));
    const req = insert();
    req.headers.delete("prefer");
    const pending = pipelineWith({ ambiguousWrites: true }).sendRequest(http.client, req);
    await vi.advanceTimersByTimeAsync(10);
    const response = await pending;
    expect(response.status).toBe(201);
    expect(response.bodyAsText).toBe(storedBody);
  });

  it.each([
    ["the read-back fails", (r: PipelineRequest) => reply(r, 500, { "x-ms-error-code": "InternalError" }), "unresolved"],
    ["the read-back body is truncated", (r: PipelineRequest) => reply(r, 200, {}, storedBody.slice(0, 20)), "unresolved"],
    ["the read-back body is not JSON", (r: PipelineRequest) => reply(r, 200, {}, "<html>"), "unresolved"],
    ["the stored entity differs", (r: PipelineRequest) => reply(r, 200, {}, storedBody.replace('"n":1', '"n":2')), "differs"],
    ["the entity is gone", (r: PipelineRequest) => reply(r, 404, { "x-ms-error-code": "ResourceNotFound" }), "differs"],
  ])("%s: the 409 surfaces, marked possibly applied", async (_name, readBack, result) => {
    // The read-back goes through the retry policy too: a 500 there is retried, so script enough answers.
    const http = httpClient(reset, (r) => reply(r, 409), readBack, readBack, readBack, readBack);
    const pending = pipelineWith({ ambiguousWrites: true }).sendRequest(http.client, insert());
    await vi.advanceTimersByTimeAsync(100);
    const response = await pending;
    expect(response.status).toBe(409);
    expect(getRetryInfo(response)).toMatchObject({ stopReason: "permanent", ambiguousWrite: result, possiblyApplied: true });
  });

  it("a read-back that hangs ends at readBackTimeoutInMs", async () => {
    const hang: Step = (r) =>
      new Promise((_resolve, reject) => r.abortSignal?.addEventListener("abort", () => reject(Object.assign(new Error("aborted"), { name: "AbortError" }))));
    const http = httpClient(reset, (r) => reply(r, 409), hang);
    const pending = pipelineWith({ ambiguousWrites: { readBackTimeoutInMs: 500 } }).sendRequest(http.client, insert());
    await vi.advanceTimersByTimeAsync(10);
    await vi.advanceTimersByTimeAsync(499);
    let settled = false;
    void pending.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect((await pending).status).toBe(409);
    expect(getRetryInfo(await pending)?.ambiguousWrite).toBe("unresolved");
  });

  it("without the read-back policy in the pipeline, nothing is read: marked, unresolved", async () => {
    const http = httpClient(reset, (r) => reply(r, 409));
    const pending = pipelineWith({ ambiguousWrites: true }, false).sendRequest(http.client, insert());
    await vi.advanceTimersByTimeAsync(10);
    const response = await pending;
    expect(http.sent).toHaveLength(2);
    expect(getRetryInfo(response)).toMatchObject({ ambiguousWrite: "unresolved", possiblyApplied: true });
  });

  it("with the read-back policy but no readBackPolicy in the retry policy, nothing is read: unresolved, and the log says why", async () => {
    const lines: string[] = [];
    const log = captureAzureLog("info", lines);
    try {
      const http = httpClient(reset, (r) => reply(r, 409), (r) => reply(r, 200, {}, storedBody));
      const pipeline = createEmptyPipeline();
      pipeline.addPolicy(ambiguousWriteReadBackPolicy(), { phase: "Serialize" });
      pipeline.addPolicy(signingPolicy);
      pipeline.addPolicy(resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }), ambiguousWrites: true }), { phase: "Retry" });
      const pending = pipeline.sendRequest(http.client, insert());
      await vi.advanceTimersByTimeAsync(10);
      const response = await pending;
      expect(http.sent.map((s) => s.method)).toEqual(["POST", "POST"]);
      expect(getRetryInfo(response)).toMatchObject({ ambiguousWrite: "unresolved", possiblyApplied: true });
      expect(lines.some((line) => line.includes("no read-back route"))).toBe(true);
    } finally {
      log.stop();
    }
  });

  it("a delete whose retry says 404 is not settled (another writer's delete leaves the same): the 404 surfaces, marked", async () => {
    const http = httpClient(reset, (r) => reply(r, 404, { "x-ms-error-code": "ResourceNotFound" }), (r) => reply(r, 404));
    const req = createPipelineRequest({ url: entity, method: "DELETE", headers: createHttpHeaders({ "if-match": "*" }) });
    const pending = pipelineWith({ ambiguousWrites: true }).sendRequest(http.client, req);
    await vi.advanceTimersByTimeAsync(10);
    expect((await pending).status).toBe(404);
    expect(getRetryInfo(await pending)).toMatchObject({ possiblyApplied: true, ambiguousWrite: "not_resolvable" });
  });

  it("retries exhausted after an unknown outcome: marked possibly applied", async () => {
    const busy: Step = (r) => reply(r, 503, { "x-ms-error-code": "ServerBusy" });
    const http = httpClient(reset, busy, busy, busy);
    const pending = pipelineWith({ ambiguousWrites: true }).sendRequest(http.client, insert());
    await vi.advanceTimersByTimeAsync(100);
    const response = await pending;
    expect(getRetryInfo(response)).toMatchObject({ stopReason: "retries-exhausted", possiblyApplied: true, ambiguousWrite: "unresolved" });
  });

  it("a success after an unknown outcome needs no settling", async () => {
    const http = httpClient(reset, (r) => reply(r, 204));
    const pending = pipelineWith({ ambiguousWrites: true }).sendRequest(http.client, insert());
    await vi.advanceTimersByTimeAsync(10);
    expect(getRetryInfo(await pending)).toMatchObject({ possiblyApplied: false, unknownOutcomes: 1 });
    expect(getRetryInfo(await pending)?.ambiguousWrite).toBeUndefined();
  });

  it("a read (GET) is never marked", async () => {
    const http = httpClient(reset, (r) => reply(r, 404));
    const pending = pipelineWith({ ambiguousWrites: true }).sendRequest(http.client, createPipelineRequest({ url: entity, method: "GET" }));
    await vi.advanceTimersByTimeAsync(10);
    expect(getRetryInfo(await pending)).toMatchObject({ possiblyApplied: false, unknownOutcomes: 0 });
  });
});

describe("the retry budget in the retry policy", () => {
  const busy = (req: PipelineRequest) => reply(req, 503, { "x-ms-error-code": "ServerBusy" });

  it("a failFast caller stops retrying with budget-exhausted when the budget is empty; the last answer surfaces", async () => {
    const budget = createRetryBudget({ minRetriesPerSecond: 1, windowInMs: 1000, retryRatio: 0, now: () => 0 });
    const next = vi.fn<SendRequest>(async (req) => busy(req));
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 5, delayInMs: 10 }), retryBudget: budget, caller: { failFast: true } });
    const pending = policy.sendRequest(createPipelineRequest({ url: entity, method: "GET" }), next);
    await vi.advanceTimersByTimeAsync(100);
    const response = await pending;
    expect(response.status).toBe(503);
    expect(next).toHaveBeenCalledTimes(2);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, stopReason: "budget-exhausted" });
    // The next operation gets no retry at all.
    const second = await policy.sendRequest(createPipelineRequest({ url: entity, method: "GET" }), next);
    expect(getRetryInfo(second)).toMatchObject({ attempts: 1, stopReason: "budget-exhausted" });
  });

  it("an open-loop caller (the default) defers a retry the empty budget holds back until a retry is free again; the budget still caps what is sent", async () => {
    // One retry per 1 s window and nothing from requests: the second retry must wait for the first to expire.
    const budget = createRetryBudget({ minRetriesPerSecond: 1, windowInMs: 1000, retryRatio: 0, now: () => Date.now() });
    let failures = 2;
    const sentAt: number[] = [];
    const start = Date.now();
    const next = vi.fn<SendRequest>(async (req) => {
      sentAt.push(Date.now() - start);
      return failures-- > 0 ? busy(req) : reply(req, 200);
    });
    const waits: string[] = [];
    const observer = { onLocalWait: (e: { reason: string; state: string }) => void waits.push(`${e.state} ${e.reason}`) };
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 5, delayInMs: 10 }), retryBudget: budget, observers: [observer], random: () => 0 });
    const pending = policy.sendRequest(createPipelineRequest({ url: entity, method: "GET" }), next);
    await vi.advanceTimersByTimeAsync(500);
    // The first retry went at once; the second waits for the budget, unsent.
    expect(next).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1000);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(next).toHaveBeenCalledTimes(3);
    // The window moves a tenth at a time: the spent retry expires within its last tenth.
    expect(sentAt[2]).toBeGreaterThanOrEqual(900);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 3, stopReason: "success" });
    // The second retry was spent as it went (after the first, which failed, had expired), and given back when it succeeded.
    expect(budget.snapshot().retries).toBe(0);
    expect(waits).toContain("started budget");
    expect(waits.at(-1)).toBe("ended budget");
  });

  it("a deferred retry gives up at the deadline with budget-exhausted and when to come back", async () => {
    const budget = createRetryBudget({ minRetriesPerSecond: 0.1, windowInMs: 10_000, retryRatio: 0, now: () => Date.now() });
    const next = vi.fn<SendRequest>(async (req) => busy(req));
    const refusals: string[] = [];
    const observer = { onOperationEnd: (e: { stopReason: string }) => void refusals.push(e.stopReason) };
    const policy = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 5, delayInMs: 10 }), retryBudget: budget, maxElapsedInMs: 2000, observers: [observer] });
    const pending = policy.sendRequest(createPipelineRequest({ url: entity, method: "GET" }), next);
    await vi.advanceTimersByTimeAsync(2500);
    const response = await pending;
    expect(response.status).toBe(503);
    expect(next).toHaveBeenCalledTimes(2);
    const info = getRetryInfo(response);
    expect(info).toMatchObject({ stopReason: "budget-exhausted" });
    expect(info?.retryAfterInMs).toBeGreaterThan(0);
    expect(refusals).toEqual(["budget-exhausted"]);
  });

  it("waiting for an open circuit spends no budget", async () => {
    const budget = createRetryBudget({ minRetriesPerSecond: 0, retryRatio: 0, now: () => 0 });
    let refusals = 3;
    const gate: AttemptGate = {
      admit: () => (refusals-- > 0 ? waitOf("circuit", 100) : SEND_NOW),
      record: () => {},
    };
    const next = vi.fn<SendRequest>(async (req) => reply(req, 200));
    const pending = resilientRetryPolicy({ gate: asGateOption(gate), retryBudget: budget, random: () => 0 }).sendRequest(createPipelineRequest({ url: entity, method: "GET" }), next);
    await vi.advanceTimersByTimeAsync(300);
    const response = await pending;
    expect(response.status).toBe(200);
    expect(getRetryInfo(response)?.classes).toEqual(["circuit_open", "circuit_open", "circuit_open", "success"]);
    expect(budget.snapshot()).toMatchObject({ retries: 0 });
  });

  it("false turns the budget off", async () => {
    const next = vi.fn<SendRequest>(async (req) => busy(req));
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 200, delayInMs: 1 }), retryBudget: false, maxElapsedInMs: Infinity }).sendRequest(
      createPipelineRequest({ url: entity, method: "GET" }),
      next,
    );
    await vi.advanceTimersByTimeAsync(1000);
    expect(getRetryInfo(await pending)).toMatchObject({ attempts: 201, stopReason: "retries-exhausted" });
  });

  it("by default each policy has its own budget: 100 retries in reserve", async () => {
    const next = vi.fn<SendRequest>(async (req) => busy(req));
    const pending = resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 200, delayInMs: 1 }), maxElapsedInMs: Infinity, caller: { failFast: true } }).sendRequest(
      createPipelineRequest({ url: entity, method: "GET" }),
      next,
    );
    await vi.advanceTimersByTimeAsync(1000);
    // 100 reserve + 0.2 for the one request, floored: 100 retries.
    expect(getRetryInfo(await pending)).toMatchObject({ attempts: 101, stopReason: "budget-exhausted" });
  });
});
