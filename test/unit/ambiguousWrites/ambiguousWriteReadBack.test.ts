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
} from "@azure/core-rest-pipeline";
import { readBackRoutesOf } from "../../../src/ambiguousWrites/readBackRoutes.js";
import { ambiguousWriteReadBackPolicy, fixedBackoff, getRetryInfo, resilientRetryPolicy, type AmbiguousWriteEvent } from "../../../src/index.js";
import { isPossiblyApplied } from "../../support/possiblyApplied.js";
import { captureAzureLog } from "../../support/captureAzureLog.js";

// How the retry policy settles a write whose first attempt's outcome was unknown, with a
// stub HttpClient behind a stand-in signing policy (the Tables client signs before Retry).

const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
const entity = `${table}(PartitionKey='p',RowKey='r')`;

function reply(req: PipelineRequest, status: number, headers: Record<string, string> = {}, bodyAsText?: string): PipelineResponse {
  return { request: req, status, headers: createHttpHeaders(headers), bodyAsText };
}
const reset = (): Error => new RestError("socket hang up", { code: "ECONNRESET" });
type Step = (req: PipelineRequest) => PipelineResponse | Error;

function httpClient(...steps: Step[]) {
  const sent: string[] = [];
  const client: HttpClient = {
    async sendRequest(req) {
      sent.push(req.method);
      const step = steps.shift();
      if (!step) throw new Error(`unexpected request ${req.method} ${req.url}`);
      const result = step(req);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  return { client, sent };
}

const signingPolicy: PipelinePolicy = {
  name: "tablesNamedKeyCredentialPolicy",
  sendRequest: (req, next) => {
    req.headers.set("authorization", `SharedKey devstoreaccount1:${req.method}`);
    return next(req);
  },
};

let events: AmbiguousWriteEvent[];

function send(http: HttpClient, request: PipelineRequest): Promise<PipelineResponse> {
  const readBackPolicy = ambiguousWriteReadBackPolicy();
  const pipeline = createEmptyPipeline();
  pipeline.addPolicy(readBackPolicy, { phase: "Serialize" });
  pipeline.addPolicy(signingPolicy);
  const observers = [{ onAmbiguousWrite: (event: AmbiguousWriteEvent) => events.push(event) }];
  const ambiguousWrites = { readBackPolicy };
  pipeline.addPolicy(resilientRetryPolicy({ retry: fixedBackoff({ maxRetries: 3, delayInMs: 10 }), ambiguousWrites, observers }), { phase: "Retry" });
  return pipeline.sendRequest(http, request);
}

async function settled(pending: Promise<PipelineResponse>): Promise<PipelineResponse> {
  await vi.advanceTimersByTimeAsync(100);
  return pending;
}

beforeEach(() => {
  vi.useFakeTimers();
  events = [];
});
afterEach(() => {
  vi.useRealTimers();
});

// Issue 17 item 1. Writer B updated the entity with ETag e0; writer A's update with the same
// stale e0 got 412, but the answer was lost (reset after the store answered); A's retry gets
// 412 again. The stored entity equals what A sent (B wrote the same) and its ETag is not e0:
// before this change A read it back and was told it had won.
describe("an update or delete conditional on an ETag is never settled by reading back", () => {
  const sent = JSON.stringify({ PartitionKey: "p", RowKey: "r", state: "claimed" });
  const stored = JSON.stringify({ "odata.etag": 'W/"datetime\'e1\'"', PartitionKey: "p", RowKey: "r", Timestamp: "2026-01-01T00:00:00Z", state: "claimed" });
  const readBack: Step = (r) => reply(r, 200, { etag: 'W/"datetime\'e1\'"' }, stored);

  it.each([
    ["Replace", "PUT", {}],
    ["Merge", "PATCH", {}],
    ["Merge tunnelled as POST", "POST", { "x-http-method": "MERGE" }],
  ])("%s with a stale ETag: the 412 surfaces, marked possibly applied, not_resolvable, nothing read", async (_name, method, extra) => {
    const http = httpClient(reset, (r) => reply(r, 412, { "x-ms-error-code": "UpdateConditionNotSatisfied" }), readBack);
    const request = createPipelineRequest({ url: entity, method: method as "PUT", body: sent, headers: createHttpHeaders({ "if-match": 'W/"datetime\'e0\'"', ...extra }) });
    const response = await settled(send(http.client, request));
    expect(response.status).toBe(412);
    expect(http.sent).toEqual([method, method]);
    expect(getRetryInfo(response)).toMatchObject({ stopReason: "permanent", possiblyApplied: true, ambiguousWrite: "not_resolvable", unknownOutcomes: 1 });
    expect(events).toMatchObject([{ operation: "update_entity", result: "not_resolvable" }]);
  });

  it('Azurite\'s "any valid weak etag": If-Match W/"wrong" refused, the refusal lost, the retry refused: the 412 surfaces', async () => {
    const http = httpClient(reset, (r) => reply(r, 412, { "x-ms-error-code": "UpdateConditionNotSatisfied" }), readBack);
    const request = createPipelineRequest({ url: entity, method: "PATCH", body: sent, headers: createHttpHeaders({ "if-match": 'W/"wrong"' }) });
    const response = await settled(send(http.client, request));
    expect(response.status).toBe(412);
    expect(isPossiblyApplied(response)).toBe(true);
  });

  it.each([
    ["If-Match: *", "*"],
    ["an ETag", 'W/"datetime\'e0\'"'],
  ])("a delete with %s whose retry says 404: the 404 surfaces, marked not_resolvable, nothing read", async (_name, ifMatch) => {
    const http = httpClient(reset, (r) => reply(r, 404, { "x-ms-error-code": "ResourceNotFound" }), (r) => reply(r, 404));
    const request = createPipelineRequest({ url: entity, method: "DELETE", headers: createHttpHeaders({ "if-match": ifMatch }) });
    const response = await settled(send(http.client, request));
    expect(response.status).toBe(404);
    expect(http.sent).toEqual(["DELETE", "DELETE"]);
    expect(getRetryInfo(response)).toMatchObject({ possiblyApplied: true, ambiguousWrite: "not_resolvable" });
  });

  it("an update with If-Match: * needs no settling: its retry succeeds", async () => {
    const http = httpClient(reset, (r) => reply(r, 204, { etag: "e2" }));
    const request = createPipelineRequest({ url: entity, method: "PUT", body: sent, headers: createHttpHeaders({ "if-match": "*" }) });
    const response = await settled(send(http.client, request));
    expect(response.status).toBe(204);
    expect(getRetryInfo(response)).toMatchObject({ possiblyApplied: false, unknownOutcomes: 1 });
  });
});

function insert(body: string): PipelineRequest {
  return createPipelineRequest({ url: table, method: "POST", body, headers: createHttpHeaders({ prefer: "return-no-content" }) });
}

// Issue 17 item 2: Azurite and the service answer a whole-number Double as 5.0, unannotated.
describe("an insert holding a whole-number Double is read back as applied", () => {
  it("sent as \"5\" with Edm.Double, stored as 5.0: applied", async () => {
    const body = JSON.stringify({ PartitionKey: "p", RowKey: "r", d: "5", "d@odata.type": "Edm.Double" });
    const stored = '{"odata.etag":"W/\\"datetime\'1\'\\"","PartitionKey":"p","RowKey":"r","d":5.0,"Timestamp":"2026-01-01T00:00:00.0000000Z"}';
    const http = httpClient(reset, (r) => reply(r, 409, { "x-ms-error-code": "EntityAlreadyExists" }), (r) => reply(r, 200, {}, stored));
    const response = await settled(send(http.client, insert(body)));
    expect(response.status).toBe(204);
    expect(getRetryInfo(response)).toMatchObject({ ambiguousWrite: "applied", possiblyApplied: false });
  });

  it("an Int32 5 sent, a Double 5.0 stored: differs", async () => {
    const body = JSON.stringify({ PartitionKey: "p", RowKey: "r", d: 5 });
    const stored = '{"PartitionKey":"p","RowKey":"r","d":5.0}';
    const http = httpClient(reset, (r) => reply(r, 409), (r) => reply(r, 200, {}, stored));
    const response = await settled(send(http.client, insert(body)));
    expect(getRetryInfo(response)).toMatchObject({ ambiguousWrite: "differs", possiblyApplied: true });
  });
});

// Issue 17 item 5: an Add-only SAS can insert but not read back.
describe("a read-back refused for want of Read permission", () => {
  it("stays unresolved, and the log says why in our words, never the server's", async () => {
    const lines: string[] = [];
    const log = captureAzureLog("info", lines);
    try {
      const serverText = "This request is not authorized to perform this operation using this permission. RequestId:secret-ish";
      const refused: Step = (r) =>
        reply(r, 403, { "x-ms-error-code": "AuthorizationPermissionMismatch" }, JSON.stringify({ "odata.error": { code: "AuthorizationPermissionMismatch", message: { value: serverText } } }));
      const http = httpClient(reset, (r) => reply(r, 409, { "x-ms-error-code": "EntityAlreadyExists" }), refused);
      const response = await settled(send(http.client, insert(JSON.stringify({ PartitionKey: "p", RowKey: "r" }))));
      expect(response.status).toBe(409);
      expect(getRetryInfo(response)).toMatchObject({ ambiguousWrite: "unresolved", possiblyApplied: true });
      const text = lines.join("\n");
      expect(text).toContain("read-back refused (403): the credential lacks Read permission");
      expect(text).not.toContain("not authorized");
      expect(text).not.toContain("secret-ish");
    } finally {
      log.stop();
    }
  });
});

describe("ambiguousWriteReadBackPolicy()", () => {
  it("remembers writes only: a GET passes through with no route", async () => {
    const policy = ambiguousWriteReadBackPolicy();
    const routes = readBackRoutesOf(policy) as NonNullable<ReturnType<typeof readBackRoutesOf>>;
    const next = vi.fn(async (req: PipelineRequest) => reply(req, 200));
    const get = createPipelineRequest({ url: entity, method: "GET" });
    const post = createPipelineRequest({ url: table, method: "POST" });
    await policy.sendRequest(get, next);
    await policy.sendRequest(post, next);
    expect(routes.routeOf(get)).toBeUndefined();
    expect(routes.routeOf(post)).toEqual({ next, url: table });
  });
});

describe("resilientRetryPolicy's ambiguousWrites.readBackRoutes", () => {
  it.each([null, {}, 5])("refuses %s with a TypeError naming ambiguousWrites.readBackRoutes", (readBackRoutes) => {
    expect(() => resilientRetryPolicy({ ambiguousWrites: { readBackRoutes: readBackRoutes } } as never)).toThrow(TypeError);
    expect(() => resilientRetryPolicy({ ambiguousWrites: { readBackRoutes: readBackRoutes } } as never)).toThrow(/ambiguousWrites\.readBackRoutes/);
  });

  it("was removed: the error says to give readBackPolicy instead", () => {
    expect(() => resilientRetryPolicy({ ambiguousWrites: { readBackRoutes: {} } } as never)).toThrow(/^ambiguousWrites\.readBackRoutes was removed: give readBackPolicy/);
  });
});

describe("resilientRetryPolicy's ambiguousWrites.readBackPolicy", () => {
  // The routes are the read-back policy's own: another policy, or one a second copy of it made by hand, has none to give.
  it.each([null, {}, { name: "ambiguousWriteReadBackPolicy", sendRequest: () => undefined }, "routes"])(
    "refuses %s with a TypeError naming ambiguousWrites.readBackPolicy",
    (readBackPolicy) => {
      expect(() => resilientRetryPolicy({ ambiguousWrites: { readBackPolicy: readBackPolicy as never } })).toThrow(TypeError);
      expect(() => resilientRetryPolicy({ ambiguousWrites: { readBackPolicy: readBackPolicy as never } })).toThrow(
        /^ambiguousWrites\.readBackPolicy must be the policy ambiguousWriteReadBackPolicy\(\) returns/,
      );
    },
  );

  it("takes the policy ambiguousWriteReadBackPolicy() made", () => {
    expect(() => resilientRetryPolicy({ ambiguousWrites: { readBackPolicy: ambiguousWriteReadBackPolicy() } })).not.toThrow();
  });
});
