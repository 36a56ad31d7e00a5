import { createEmptyPipeline, createHttpHeaders, createPipelineRequest, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { EntityOperationNames } from "../../../src/address/entityOperationNames.js";
import { resilientRetryPolicy } from "../../../src/policies/resilientRetryPolicy.js";
import { storageOperationName } from "../../../src/address/storageOperation.js";
import { extractScope } from "../../../src/address/extractScope.js";
import { parseAccountAndPath } from "../../../src/address/parseAccountAndPath.js";
import { scopeKey, type StorageService } from "../../../src/address/partitionScope.js";
import { captureTableRequests, type CapturedRequest } from "../../support/captureTableRequests.js";
import { deleteBatchBody } from "../../support/tableBatchBody.js";

// Counted, so the tests can tell how often the URL was parsed.
vi.mock("../../../src/address/parseAccountAndPath.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/address/parseAccountAndPath.js")>();
  return { ...actual, parseAccountAndPath: vi.fn(actual.parseAccountAndPath) };
});

function parses(action: () => void): number {
  const before = vi.mocked(parseAccountAndPath).mock.calls.length;
  action();
  return vi.mocked(parseAccountAndPath).mock.calls.length - before;
}

function pipelineRequest(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): PipelineRequest {
  return createPipelineRequest({ method: method as PipelineRequest["method"], url, body: body as PipelineRequest["body"], headers: createHttpHeaders(headers) });
}

/** The scope key and service an address gives, in the shape the breaker keys circuits by. */
function keyOf(request: PipelineRequest, service?: StorageService) {
  const address = readRequestAddress(request, service);
  return address.scopeKey === undefined ? undefined : { key: address.scopeKey, service: address.scope?.service };
}

const AZ = "http://127.0.0.1:10002/devstoreaccount1";
const TABLE_HOST = "https://acct.table.core.windows.net";
const BLOB_HOST = "https://acct.blob.core.windows.net";
const QUEUE_HOST = "https://acct.queue.core.windows.net";

const table = (key: string) => ({ key, service: "table" });

async function firstPage(entities: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of entities) break;
}

describe("readRequestAddress: scope key", () => {
  const batchBody = deleteBatchBody(AZ);

  it.each<[string, string, string | undefined, StorageService | undefined, { key: string; service: string } | undefined]>([
    // Entity addresses as the SDK writes them.
    ["GET", `${AZ}/bench(PartitionKey='p17',RowKey='r123456')`, undefined, "table", table("table|devstoreaccount1|bench|p17")],
    ["PUT", `${AZ}/bench(PartitionKey='p17',RowKey='r1')?timeout=30#x`, undefined, "table", table("table|devstoreaccount1|bench|p17")],
    ["DELETE", `${AZ}/bench(PartitionKey='p17',RowKey='r1')`, undefined, undefined, table("table|devstoreaccount1|bench|p17")],
    ["GET", "http://127.0.0.1:10002/devstoreaccount1-secondary/t(PartitionKey='p',RowKey='r')", undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='',RowKey='')`, undefined, "table", table("table|devstoreaccount1|t|")],
    ["GET", `${AZ}/t(PartitionKey='a,b)=c(!~*',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|a,b)=c(!~*")],
    ["PATCH", `${TABLE_HOST}/orders(PartitionKey='p',RowKey='r')`, undefined, undefined, table("table|acct|orders|p")],
    ["GET", "https://acct-secondary.table.core.windows.net/orders(PartitionKey='p',RowKey='r')", undefined, undefined, table("table|acct|orders|p")],
    ["GET", "http://localhost:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", "https://tables.example.com/t(PartitionKey='p',RowKey='r')", undefined, "table", table("table|tables.example.com|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p%20q',RowKey='r%2F1')`, undefined, "table", table("table|devstoreaccount1|t|p q")],
    ["GET", `${AZ}/t(PartitionKey='%C3%BCn%C3%AF%F0%9F%9A%80%2C%29',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|ünï🚀,)")],
    ["GET", `${AZ}/t(PartitionKey='O''Brien',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|O'Brien")],
    ["GET", `${AZ}/t(PartitionKey='a''''',RowKey='O''')`, undefined, "table", table("table|devstoreaccount1|t|a''")],
    ["GET", `${AZ}/t(PartitionKey='''%20x''',RowKey='''')`, undefined, "table", table("table|devstoreaccount1|t|' x'")],
    ["GET", `${AZ}/t(PartitionKey='p%27q',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/t(PartitionKey='p%27%27q',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|p'q")],
    ["GET", `${AZ}/t(PartitionKey='p',RowKey='r%27,PartitionKey=%27x')`, undefined, "table", table("table|devstoreaccount1|t|x")],
    ["GET", `${AZ}/t(PartitionKey='p%E0%A4%A',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|p%E0%A4%A")],
    ["GET", `${AZ}/t(PartitionKey='p%20q',RowKey='r%C3')`, undefined, "table", table("table|devstoreaccount1|t|p%20q")],
    ["GET", `${AZ}/t(PartitionKey='a%7Cb',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|a\\|b")],
    ["GET", `${AZ}/t(PartitionKey='O%27Brien',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/t(PartitionKey='ünï',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|ünï")],
    ["GET", `${AZ}/t(PartitionKey='a|b',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|a\\|b")],
    ["GET", `${AZ}/t(PartitionKey='a\\b',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/x/../t(PartitionKey='p',RowKey='r')`, undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey = 'p', RowKey = 'r')`, undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", "HTTP://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", table("table|devstoreaccount1|t|p")],
    // Entity addresses in other orders and shapes.
    ["GET", `${AZ}/t(RowKey='r',PartitionKey='p')`, undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(RowKey='r',PartitionKey='O''Brien')`, undefined, "table", table("table|devstoreaccount1|t|O'Brien")],
    ["GET", `${AZ}/t(PartitionKey='p')`, undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='a',PartitionKey='b',)`, undefined, "table", table("table|devstoreaccount1|t|b")],
    ["GET", `${AZ}/t(PartitionKey='p',RowKey='r')/extra`, undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p',RowKey='r')x`, undefined, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p'`, undefined, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/t(PartitionKey=p)`, undefined, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/t(='p')`, undefined, "table", table("table|devstoreaccount1|")],
    // Tables: table-wide and account-wide.
    ["GET", `${AZ}/orders()`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders()?$top=5&$select=a,b&NextPartitionKey=1!8!YQ--`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders()#$filter=PartitionKey%20eq%20'p'`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders?comp=acl`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/t('x')`, undefined, "table", table("table|devstoreaccount1|t")],
    ["DELETE", `${AZ}/Tables('orders')`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["POST", `${AZ}/Tables`, '{"TableName":"orders"}', undefined, table("table|devstoreaccount1|orders")],
    // Tables queries with a filter.
    ["GET", `${AZ}/orders()?$filter=PartitionKey%20eq%20'pk'`, undefined, "table", table("table|devstoreaccount1|orders|pk")],
    ["GET", `${AZ}/orders()?%24filter=PartitionKey%20eq%20'p''k%7C'&$top=5`, undefined, "table", table("table|devstoreaccount1|orders|p'k\\|")],
    ["GET", `${AZ}/orders?$filter=PartitionKey eq 'pk'`, undefined, "table", table("table|devstoreaccount1|orders|pk")],
    ["GET", `${AZ}/orders()?$filter=PartitionKey%20ge%20'pk'`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders()?$top=1&%24select=a`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["DELETE", `${AZ}/orders?$filter=PartitionKey%20eq%20'pk'`, undefined, "table", table("table|devstoreaccount1|orders")],
    // Tables inserts and batches: the body decides.
    ["POST", `${AZ}/orders`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["POST", `${AZ}/orders`, '{"PartitionKey":"pk","RowKey":"r"}', "table", table("table|devstoreaccount1|orders|pk")],
    ["POST", `${AZ}/$batch`, batchBody, "table", table("table|devstoreaccount1|t|pk")],
    ["POST", `${AZ}/$batch`, batchBody, undefined, table("table|devstoreaccount1|t|pk")],
    ["DELETE", `${AZ}/orders`, undefined, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/?restype=service&comp=properties`, undefined, "table", table("table|devstoreaccount1|")],
    ["GET", `${TABLE_HOST}/`, undefined, undefined, table("table|acct|")],
    ["GET", TABLE_HOST, undefined, undefined, table("table|acct|")],
    // Blob.
    ["PUT", `${BLOB_HOST}/photos/2024/01/cat.png?comp=block&blockid=AA`, undefined, undefined, { key: "blob|acct|photos|2024/01/cat.png", service: "blob" }],
    ["PUT", `${BLOB_HOST}/photos?restype=container`, undefined, undefined, { key: "blob|acct|photos", service: "blob" }],
    ["GET", `${BLOB_HOST}/photos/?restype=container&comp=list`, undefined, undefined, { key: "blob|acct|photos", service: "blob" }],
    ["GET", `${BLOB_HOST}/photos/dir//x`, undefined, undefined, { key: "blob|acct|photos|dir//x", service: "blob" }],
    ["GET", `${BLOB_HOST}/$web/index.html`, undefined, undefined, { key: "blob|acct|$web|index.html", service: "blob" }],
    ["GET", `${BLOB_HOST}/?comp=list`, undefined, undefined, { key: "blob|acct|", service: "blob" }],
    ["GET", `${BLOB_HOST}/photos/a%20b`, undefined, undefined, { key: "blob|acct|photos|a b", service: "blob" }],
    ["GET", `${BLOB_HOST}/photos/a|b`, undefined, undefined, { key: "blob|acct|photos|a\\|b", service: "blob" }],
    ["GET", "http://127.0.0.1:10000/devstoreaccount1/c/b/x", undefined, "blob", { key: "blob|devstoreaccount1|c|b/x", service: "blob" }],
    // Queue.
    ["POST", `${QUEUE_HOST}/jobs/messages?visibilitytimeout=5`, undefined, undefined, { key: "queue|acct|jobs", service: "queue" }],
    ["GET", "http://127.0.0.1:10001/devstoreaccount1/jobs/messages?numofmessages=32", undefined, "queue", { key: "queue|devstoreaccount1|jobs", service: "queue" }],
    ["GET", `${QUEUE_HOST}/?comp=list`, undefined, undefined, { key: "queue|acct|", service: "queue" }],
    // A hint overrides the host; no hint and no Tables shape on a path-style URL: no scope.
    ["GET", `${BLOB_HOST}/t(PartitionKey='p',RowKey='r')`, undefined, "table", table("table|acct|t|p")],
    ["GET", `${TABLE_HOST}/t(PartitionKey='p',RowKey='r')`, undefined, "queue", { key: "queue|acct|t(PartitionKey='p',RowKey='r')", service: "queue" }],
    ["GET", `${AZ}/orders`, undefined, undefined, undefined],
    ["GET", "http://127.0.0.1:10002/", undefined, "table", undefined],
    ["GET", "http://127.0.0.1:10002//t(PartitionKey='p',RowKey='r')", undefined, "table", undefined],
    ["GET", "http://127.0.0.1:99999/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", undefined],
    ["GET", "ftp://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", undefined],
  ])("%s %s (body %j, %s) is %j", (method, url, body, service, answer) => {
    expect(keyOf(pipelineRequest(method, url, body), service)).toEqual(answer);
    expect(answer).toEqual(expectedKey({ method, url, body }, service));
  });

  it("reads what the real TableClient sends for point operations and queries", async () => {
    const captured = await captureTableRequests(async (client) => {
      await client.getEntity("p17", "r1").catch(() => undefined);
      await client.updateEntity({ partitionKey: "p17", rowKey: "r1" }, "Merge").catch(() => undefined);
      await client.upsertEntity({ partitionKey: "p17", rowKey: "r1" }, "Replace").catch(() => undefined);
      await client.deleteEntity("p17", "r1").catch(() => undefined);
      await client.getEntity("tenant:7 é/x", "r@1").catch(() => undefined);
      await firstPage(client.listEntities()).catch(() => undefined);
      await firstPage(client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p''x' and RowKey gt 'a'" } })).catch(() => undefined);
      await client.deleteEntity("tenant:7 é/x", "r@1").catch(() => undefined);
    });
    const requests = captured.map(fromCaptured);
    expect(requests.map((r) => r.method)).toEqual(["GET", "PATCH", "PUT", "DELETE", "GET", "GET", "GET", "DELETE"]);
    expect(requests.slice(0, 4).map((r) => readRequestAddress(r, "table").scopeKey)).toEqual(Array(4).fill("table|devstoreaccount1|orders|p17"));
    expect(readRequestAddress(requests[4]!, "table").scopeKey).toBe("table|devstoreaccount1|orders|tenant:7 é/x");
    expect(readRequestAddress(requests[5]!, "table").scopeKey).toBe("table|devstoreaccount1|orders");
    expect(readRequestAddress(requests[6]!, "table").scopeKey).toBe("table|devstoreaccount1|orders|p'x");
    expect(readRequestAddress(requests[7]!, "table").tableWrite).toMatchObject({ kind: "delete", partitionKey: "tenant:7 é/x", rowKey: "r@1" });
  });

  it("never throws, whatever it is given", () => {
    const requests: unknown[] = [
      null,
      undefined,
      42,
      {},
      { method: "GET" },
      { method: 1, url: `${AZ}/t(PartitionKey='p',RowKey='r')` },
      { method: "POST", url: `${AZ}/orders`, body: Buffer.from('{"PartitionKey":"p"}') },
      { method: "POST", url: `${AZ}/$batch`, body: 7 },
      {
        method: "GET",
        get url(): string {
          throw new Error("boom");
        },
      },
    ];
    for (const request of requests) {
      const address = readRequestAddress(request as PipelineRequest, "table");
      expect(() => [address.service, address.scope, address.scopeKey, address.operation]).not.toThrow();
    }
    expect(readRequestAddress(requests[6] as PipelineRequest, "table").scopeKey).toBe("table|devstoreaccount1|orders");
    expect(readRequestAddress(requests[5] as PipelineRequest, "table").scopeKey).toBe("table|devstoreaccount1|t|p");
    expect(readRequestAddress(requests[5] as PipelineRequest, "table").operation).toBe("other");
    expect(readRequestAddress(requests[8] as PipelineRequest, "table").operation).toBe("other");
  });
});

describe("readRequestAddress: service, operation and a write's entity keys", () => {
  it.each<[string, string, StorageService | undefined, StorageService | undefined, string]>([
    ["GET", `${AZ}/orders(PartitionKey='p',RowKey='r')`, "table", "table", "get_entity"],
    // No hint: Tables shapes are recognised on a path-style URL, anything else is unknown.
    ["GET", `${AZ}/orders(PartitionKey='p',RowKey='r')`, undefined, "table", "get_entity"],
    ["POST", `${AZ}/$batch`, undefined, "table", "batch"],
    ["GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", undefined, undefined, "other"],
    ["GET", "http://127.0.0.1:10000/devstoreaccount1/c/b", "blob", "blob", "download_blob"],
    ["POST", `${QUEUE_HOST}/jobs/messages`, undefined, "queue", "send_message"],
    ["PUT", `${BLOB_HOST}/c/b`, undefined, "blob", "upload_blob"],
    // The hint wins over the host.
    ["GET", `${BLOB_HOST}/t(PartitionKey='p',RowKey='r')`, "table", "table", "get_entity"],
    ["GET", "not a url", "table", "table", "other"],
    ["GET", "not a url", undefined, undefined, "other"],
  ])("%s %s (%s): service %s, operation %s", (method, url, hint, service, operation) => {
    const address = readRequestAddress(pipelineRequest(method, url), hint);
    expect(address.service).toBe(service);
    expect(address.operation).toBe(operation);
  });

  it("names an update by its If-Match header, as storageOperationName does", () => {
    const url = `${TABLE_HOST}/orders(PartitionKey='p',RowKey='r')`;
    expect(readRequestAddress(pipelineRequest("PATCH", url, undefined, { "if-match": "*" })).operation).toBe("update_entity");
    expect(readRequestAddress(pipelineRequest("PATCH", url)).operation).toBe("upsert_entity");
  });

  it.each<[string, { partitionKey: string; rowKey: string } | undefined]>([
    [`${AZ}/orders(PartitionKey='p%20q',RowKey='O''Brien')`, { partitionKey: "p q", rowKey: "O'Brien" }],
    [`${AZ}/orders(RowKey='r',PartitionKey='')`, { partitionKey: "", rowKey: "r" }],
    [`${TABLE_HOST}/orders(PartitionKey='p',RowKey='r')?$select=a`, { partitionKey: "p", rowKey: "r" }],
    [`${AZ}/orders(PartitionKey='p')`, undefined],
    [`${AZ}/orders(PartitionKey='p',RowKey='r')/extra`, undefined],
    [`${AZ}/orders()`, undefined],
    [`${AZ}/orders`, undefined],
    [`${AZ}/Tables(PartitionKey='p',RowKey='r')`, undefined],
    [`${AZ}/$batch`, undefined],
  ])("entity keys of an update of %s: %j", (url, keys) => {
    const tableWrite = readRequestAddress(pipelineRequest("PUT", url, undefined, { "if-match": "*" }), "table").tableWrite;
    expect(tableWrite === undefined ? undefined : { partitionKey: tableWrite.partitionKey, rowKey: tableWrite.rowKey }).toEqual(keys);
  });
});

describe("readRequestAddress: one parse, on first use", () => {
  it("parses nothing until asked, then the URL once for every field", () => {
    const request = pipelineRequest("GET", `${AZ}/orders(PartitionKey='p',RowKey='r')`);
    let address = readRequestAddress(request, "table");
    expect(parses(() => (address = readRequestAddress(request, "table")))).toBe(0);
    expect(
      parses(() => {
        for (let i = 0; i < 2; i++) void [address.operation, address.scope, address.scopeKey, address.service, address.account];
      }),
    ).toBe(1);
    expect(address.request).toBe(request);
  });

  it("names a point read from what its install learnt, without parsing, once the table's first was parsed", () => {
    const names = new EntityOperationNames();
    const first = readRequestAddress(pipelineRequest("GET", `${AZ}/orders(PartitionKey='p',RowKey='r1')`), "table", names);
    expect(parses(() => expect(first.operation).toBe("get_entity"))).toBe(1);
    const next = readRequestAddress(pipelineRequest("GET", `${AZ}/orders(PartitionKey='p',RowKey='r2')`), "table", names);
    expect(parses(() => expect(next.operation).toBe("get_entity"))).toBe(0);
    // The other fields still read the URL, once.
    expect(parses(() => expect(next.scopeKey).toBe("table|devstoreaccount1|orders|p"))).toBe(1);
    // Not for another service: names are a Tables install's.
    const blob = readRequestAddress(pipelineRequest("GET", `${AZ}/orders(PartitionKey='p',RowKey='r3')`), "blob", names);
    expect(parses(() => expect(blob.operation).toBe("download_blob"))).toBe(1);
  });

  it("a Tables retry policy names its point reads from what it learnt: one parse for many reads", async () => {
    const operations: string[] = [];
    const pipeline = createEmptyPipeline();
    pipeline.addPolicy(resilientRetryPolicy({ service: "table", observers: [{ onAttempt: (event) => void operations.push(event.address.operation) }] }));
    const ok: HttpClient = { sendRequest: (request) => Promise.resolve({ request, status: 200, headers: createHttpHeaders() }) };
    const before = vi.mocked(parseAccountAndPath).mock.calls.length;
    for (let i = 0; i < 5; i++) await pipeline.sendRequest(ok, pipelineRequest("GET", `${AZ}/orders(PartitionKey='p',RowKey='r${i}')`));
    expect(operations).toEqual(Array(5).fill("get_entity"));
    expect(vi.mocked(parseAccountAndPath).mock.calls.length - before).toBe(1);
  });

  it("keeps what it read: the same scope object on every access", () => {
    const address = readRequestAddress(pipelineRequest("POST", `${AZ}/$batch`, deleteBatchBody(AZ)), "table");
    const scope = address.scope;
    expect(scope).toEqual({ service: "table", account: "devstoreaccount1", resource: "t", partition: "pk" });
    expect(parses(() => expect(address.scope).toBe(scope))).toBe(0);
  });
});

/** What the address must equal: the pure functions, on the same request. */
function expectedKey(request: { method: string; url: string; body?: string }, service: StorageService | undefined) {
  const scope = extractScope(request, service);
  return scope === undefined ? undefined : { key: scopeKey(scope), service: scope.service };
}

function fromCaptured(request: CapturedRequest): PipelineRequest {
  return pipelineRequest(request.method, request.url, request.body, request.headers);
}

const services = fc.constantFrom<StorageService | undefined>(undefined, "table", "blob", "queue");
const origin = fc.constantFrom(
  "http://127.0.0.1:10002",
  "http://localhost:10001",
  "http://azurite:10002",
  "https://acct.table.core.windows.net",
  "https://acct-secondary.blob.core.windows.net",
  "https://acct.queue.core.windows.net",
  "https://files.example.com",
  "HTTP://127.0.0.1:10002",
  "ftp://127.0.0.1",
);
const piece = fc.oneof(
  fc.constantFrom(
    "/", "/devstoreaccount1", "/orders", "/Tables", "/$batch", "/c", "/messages", "(PartitionKey='p',RowKey='r')", "()", "('x')",
    "?$filter=PartitionKey%20eq%20'p'", "?comp=list", "?restype=container", "%20", "%27", "%zz", "|", "\\", "é", "..", "#",
  ),
  fc.string({ maxLength: 3 }),
);
const method = fc.constantFrom("GET", "PUT", "PATCH", "MERGE", "DELETE", "POST", "HEAD", "get");
const body = fc.constantFrom(undefined, "", '{"PartitionKey":"pb","RowKey":"r"}', '{"TableName":"tb"}', "garbage");

describe("RequestAddress.under", () => {
  it("is the address itself under its own service or none; under another, its request read again under that one", () => {
    // Azurite's path-style Queue URL: read with no hint, neither its host nor its path names the service.
    const request = pipelineRequest("GET", "http://127.0.0.1:10001/devstoreaccount1/jobs/messages");
    const unhinted = readRequestAddress(request);
    expect(unhinted.service).toBeUndefined();
    expect(unhinted.scopeKey).toBeUndefined();
    expect(unhinted.under(undefined)).toBe(unhinted);
    const queue = unhinted.under("queue");
    expect(queue.service).toBe("queue");
    expect(queue.request).toBe(request);
    expect(queue.scopeKey).toBe(readRequestAddress(request, "queue").scopeKey);
    expect(queue.scopeKey).toBeDefined();
    expect(queue.under("queue")).toBe(queue);
  });
});

describe("readRequestAddress (property)", () => {
  it("answers as extractScope, scopeKey and storageOperationName, whichever field is read first", () => {
    fc.assert(
      fc.property(method, origin, fc.array(piece, { maxLength: 8 }), body, services, fc.boolean(), (m, o, parts, b, hint, operationFirst) => {
        const url = o + parts.join("");
        const request = pipelineRequest(m, url, b, { "if-match": "*" });
        const address = readRequestAddress(request, hint);
        const operation = operationFirst ? address.operation : undefined;
        const scope = extractScope({ method: m, url, body: b }, hint);
        expect(address.scope).toEqual(scope);
        expect(address.scopeKey).toBe(scope === undefined ? undefined : scopeKey(scope));
        if (scope !== undefined) expect(address.service).toBe(scope.service);
        const named = address.service === undefined ? "other" : storageOperationName(address.service, request);
        expect(operation ?? address.operation).toBe(named);
      }),
      { numRuns: 3_000 },
    );
  });
});
