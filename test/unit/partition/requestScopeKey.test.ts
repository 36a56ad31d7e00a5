import fc from "fast-check";
import { describe, expect, it, vi } from "vitest";
import { extractScope } from "../../../src/partition/extractScope.js";
import type { StorageService } from "../../../src/partition/partitionScope.js";
import { requestScopeKey, type ScopeKeyRequest } from "../../../src/partition/requestScopeKey.js";
import { scopeKey } from "../../../src/partition/scopeKey.js";
import { captureTableRequests } from "../../support/captureTableRequests.js";
import { deleteBatchBody } from "../../support/tableBatchBody.js";

// Counted, so the tests can tell the fast path (which never calls it) from the slow one.
vi.mock("../../../src/partition/extractScope.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../../src/partition/extractScope.js")>();
  return { ...actual, extractScope: vi.fn(actual.extractScope) };
});

/** What requestScopeKey must equal: extractScope, then scopeKey. */
function expected(request: ScopeKeyRequest, service: StorageService | undefined) {
  const scope = extractScope(
    { method: request.method, url: request.url, body: typeof request.body === "string" ? request.body : undefined },
    service,
  );
  return scope === undefined ? undefined : { key: scopeKey(scope), service: scope.service };
}

/** requestScopeKey's answer, and whether it went the slow way (through extractScope). */
function read(request: ScopeKeyRequest, service?: StorageService) {
  const before = vi.mocked(extractScope).mock.calls.length;
  const answer = requestScopeKey(request, service);
  return { answer, slow: vi.mocked(extractScope).mock.calls.length > before };
}

const AZ = "http://127.0.0.1:10002/devstoreaccount1";
const TABLE_HOST = "https://acct.table.core.windows.net";
const BLOB_HOST = "https://acct.blob.core.windows.net";
const QUEUE_HOST = "https://acct.queue.core.windows.net";

const table = (key: string) => ({ key, service: "table" });

async function firstPage(entities: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of entities) break;
}

describe("requestScopeKey: fast path", () => {
  it.each<[string, string, StorageService | undefined, { key: string; service: string } | undefined]>([
    // Entity addresses as the SDK writes them.
    ["GET", `${AZ}/bench(PartitionKey='p17',RowKey='r123456')`, "table", table("table|devstoreaccount1|bench|p17")],
    ["PUT", `${AZ}/bench(PartitionKey='p17',RowKey='r1')?timeout=30#x`, "table", table("table|devstoreaccount1|bench|p17")],
    ["DELETE", `${AZ}/bench(PartitionKey='p17',RowKey='r1')`, undefined, table("table|devstoreaccount1|bench|p17")],
    ["GET", "http://127.0.0.1:10002/devstoreaccount1-secondary/t(PartitionKey='p',RowKey='r')", "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='',RowKey='')`, "table", table("table|devstoreaccount1|t|")],
    ["GET", `${AZ}/t(PartitionKey='a,b)=c(!~*',RowKey='r')`, "table", table("table|devstoreaccount1|t|a,b)=c(!~*")],
    ["PATCH", `${TABLE_HOST}/orders(PartitionKey='p',RowKey='r')`, undefined, table("table|acct|orders|p")],
    ["GET", "https://acct-secondary.table.core.windows.net/orders(PartitionKey='p',RowKey='r')", undefined, table("table|acct|orders|p")],
    ["GET", "http://localhost:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r')", "table", table("table|devstoreaccount1|t|p")],
    ["GET", "https://tables.example.com/t(PartitionKey='p',RowKey='r')", "table", table("table|tables.example.com|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p%20q',RowKey='r%2F1')`, "table", table("table|devstoreaccount1|t|p q")],
    ["GET", `${AZ}/t(PartitionKey='%C3%BCn%C3%AF%F0%9F%9A%80%2C%29',RowKey='r')`, "table", table("table|devstoreaccount1|t|ünï🚀,)")],
    ["GET", `${AZ}/t(PartitionKey='O''Brien',RowKey='r')`, "table", table("table|devstoreaccount1|t|O'Brien")],
    ["GET", `${AZ}/t(PartitionKey='a''''',RowKey='O''')`, "table", table("table|devstoreaccount1|t|a''")],
    ["GET", `${AZ}/t(PartitionKey='''%20x''',RowKey='''')`, "table", table("table|devstoreaccount1|t|' x'")],
    // Entity addresses in other orders and shapes: the general reading.
    ["GET", `${AZ}/t(RowKey='r',PartitionKey='p')`, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p')`, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='a',PartitionKey='b',)`, "table", table("table|devstoreaccount1|t|b")],
    ["GET", `${AZ}/t(PartitionKey='p',RowKey='r')/extra`, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p',RowKey='r')x`, "table", table("table|devstoreaccount1|t|p")],
    ["GET", `${AZ}/t(PartitionKey='p'`, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/t(PartitionKey=p)`, "table", table("table|devstoreaccount1|")],
    ["GET", `${AZ}/t(='p')`, "table", table("table|devstoreaccount1|")],
    // Tables: table-wide and account-wide.
    ["GET", `${AZ}/orders()`, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders()?$top=5&$select=a,b&NextPartitionKey=1!8!YQ--`, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders`, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders()#$filter=PartitionKey%20eq%20'p'`, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders?comp=acl`, "table", table("table|devstoreaccount1|orders")],
    // Tables queries with a filter (read by tableScope's own helpers).
    ["GET", `${AZ}/orders()?$filter=PartitionKey%20eq%20'pk'`, "table", table("table|devstoreaccount1|orders|pk")],
    ["GET", `${AZ}/orders()?%24filter=PartitionKey%20eq%20'p''k%7C'&$top=5`, "table", table("table|devstoreaccount1|orders|p'k\\|")],
    ["GET", `${AZ}/orders?$filter=PartitionKey eq 'pk'`, "table", table("table|devstoreaccount1|orders|pk")],
    ["GET", `${AZ}/orders()?$filter=PartitionKey%20ge%20'pk'`, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/orders()?$top=1&%24select=a`, "table", table("table|devstoreaccount1|orders")],
    ["DELETE", `${AZ}/orders?$filter=PartitionKey%20eq%20'pk'`, "table", table("table|devstoreaccount1|orders")],
    ["POST", `${AZ}/orders`, "table", table("table|devstoreaccount1|orders")],
    ["DELETE", `${AZ}/orders`, "table", table("table|devstoreaccount1|orders")],
    ["GET", `${AZ}/?restype=service&comp=properties`, "table", table("table|devstoreaccount1|")],
    ["GET", `${TABLE_HOST}/`, undefined, table("table|acct|")],
    ["GET", TABLE_HOST, undefined, table("table|acct|")],
    // Blob.
    ["PUT", `${BLOB_HOST}/photos/2024/01/cat.png?comp=block&blockid=AA`, undefined, { key: "blob|acct|photos|2024/01/cat.png", service: "blob" }],
    ["PUT", `${BLOB_HOST}/photos?restype=container`, undefined, { key: "blob|acct|photos", service: "blob" }],
    ["GET", `${BLOB_HOST}/photos/?restype=container&comp=list`, undefined, { key: "blob|acct|photos", service: "blob" }],
    ["GET", `${BLOB_HOST}/photos/dir//x`, undefined, { key: "blob|acct|photos|dir//x", service: "blob" }],
    ["GET", `${BLOB_HOST}/$web/index.html`, undefined, { key: "blob|acct|$web|index.html", service: "blob" }],
    ["GET", `${BLOB_HOST}/?comp=list`, undefined, { key: "blob|acct|", service: "blob" }],
    ["GET", "http://127.0.0.1:10000/devstoreaccount1/c/b/x", "blob", { key: "blob|devstoreaccount1|c|b/x", service: "blob" }],
    // Queue.
    ["POST", `${QUEUE_HOST}/jobs/messages?visibilitytimeout=5`, undefined, { key: "queue|acct|jobs", service: "queue" }],
    ["GET", "http://127.0.0.1:10001/devstoreaccount1/jobs/messages?numofmessages=32", "queue", { key: "queue|devstoreaccount1|jobs", service: "queue" }],
    ["GET", `${QUEUE_HOST}/?comp=list`, undefined, { key: "queue|acct|", service: "queue" }],
    // A hint overrides the host; no hint and no Tables shape on a path-style URL: no scope.
    ["GET", `${BLOB_HOST}/t(PartitionKey='p',RowKey='r')`, "table", table("table|acct|t|p")],
    ["GET", `${TABLE_HOST}/t(PartitionKey='p',RowKey='r')`, "queue", { key: "queue|acct|t(PartitionKey='p',RowKey='r')", service: "queue" }],
    ["GET", `${AZ}/orders`, undefined, undefined],
    ["GET", "http://127.0.0.1:10002/", "table", undefined],
    ["GET", "http://127.0.0.1:10002//t(PartitionKey='p',RowKey='r')", "table", undefined],
  ])("%s %s (%s) is %j without the slow path", (method, url, service, answer) => {
    expect(read({ method, url }, service)).toEqual({ answer, slow: false });
    expect(read({ method, url }, service)).toEqual({ answer, slow: false });
    expect(answer).toEqual(expected({ method, url }, service));
  });

  it("reads what the real TableClient sends for point operations and queries without the slow path", async () => {
    const requests = await captureTableRequests(async (client) => {
      await client.getEntity("p17", "r1").catch(() => undefined);
      await client.updateEntity({ partitionKey: "p17", rowKey: "r1" }, "Merge").catch(() => undefined);
      await client.upsertEntity({ partitionKey: "p17", rowKey: "r1" }, "Replace").catch(() => undefined);
      await client.deleteEntity("p17", "r1").catch(() => undefined);
      await client.getEntity("tenant:7 é/x", "r@1").catch(() => undefined);
      await firstPage(client.listEntities()).catch(() => undefined);
      await firstPage(client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p''x' and RowKey gt 'a'" } })).catch(() => undefined);
    });
    expect(requests.map((r) => r.method)).toEqual(["GET", "PATCH", "PUT", "DELETE", "GET", "GET", "GET"]);
    for (const request of requests) {
      const { answer, slow } = read(request, "table");
      expect(slow).toBe(false);
      expect(answer).toEqual(expected(request, "table"));
    }
    expect(requests.slice(0, 4).map((r) => requestScopeKey(r, "table")?.key)).toEqual(Array(4).fill("table|devstoreaccount1|orders|p17"));
    expect(requestScopeKey(requests[4]!, "table")?.key).toBe("table|devstoreaccount1|orders|tenant:7 é/x");
    expect(requestScopeKey(requests[6]!, "table")?.key).toBe("table|devstoreaccount1|orders|p'x");
  });
});

describe("requestScopeKey: slow path", () => {
  const batchBody = deleteBatchBody(AZ);

  it.each<[string, string, string | undefined, StorageService | undefined, string | undefined]>([
    ["GET", `${AZ}/t(PartitionKey='p%27q',RowKey='r')`, undefined, "table", "table|devstoreaccount1|"],
    ["GET", `${AZ}/t(PartitionKey='p%27%27q',RowKey='r')`, undefined, "table", "table|devstoreaccount1|t|p'q"],
    ["GET", `${AZ}/t(PartitionKey='p',RowKey='r%27,PartitionKey=%27x')`, undefined, "table", "table|devstoreaccount1|t|x"],
    ["GET", `${AZ}/t(PartitionKey='p%E0%A4%A',RowKey='r')`, undefined, "table", "table|devstoreaccount1|t|p%E0%A4%A"],
    ["GET", `${AZ}/t(PartitionKey='p%20q',RowKey='r%C3')`, undefined, "table", "table|devstoreaccount1|t|p%20q"],
    ["GET", `${AZ}/t(PartitionKey='a%7Cb',RowKey='r')`, undefined, "table", "table|devstoreaccount1|t|a\\|b"],
    ["GET", `${AZ}/t(RowKey='r',PartitionKey='O''Brien')`, undefined, "table", "table|devstoreaccount1|t|O'Brien"],
    ["GET", `${AZ}/t(PartitionKey='O%27Brien',RowKey='r')`, undefined, "table", "table|devstoreaccount1|"],
    ["GET", `${AZ}/t(PartitionKey='ünï',RowKey='r')`, undefined, "table", "table|devstoreaccount1|t|ünï"],
    ["GET", `${AZ}/t(PartitionKey='a|b',RowKey='r')`, undefined, "table", "table|devstoreaccount1|t|a\\|b"],
    ["GET", `${AZ}/t(PartitionKey='a\\b',RowKey='r')`, undefined, "table", "table|devstoreaccount1|"],
    ["GET", `${AZ}/x/../t(PartitionKey='p',RowKey='r')`, undefined, "table", "table|devstoreaccount1|t|p"],
    ["GET", `${AZ}/t(PartitionKey = 'p', RowKey = 'r')`, undefined, "table", "table|devstoreaccount1|t|p"],
    ["POST", `${AZ}/$batch`, batchBody, "table", "table|devstoreaccount1|t|pk"],
    ["POST", `${AZ}/$batch`, batchBody, undefined, "table|devstoreaccount1|t|pk"],
    ["POST", `${AZ}/orders`, '{"PartitionKey":"pk","RowKey":"r"}', "table", "table|devstoreaccount1|orders|pk"],
    ["DELETE", `${AZ}/Tables('orders')`, undefined, "table", "table|devstoreaccount1|orders"],
    ["POST", `${AZ}/Tables`, '{"TableName":"orders"}', undefined, "table|devstoreaccount1|orders"],
    ["GET", `${AZ}/t('x')`, undefined, "table", "table|devstoreaccount1|t"],
    ["GET", "HTTP://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", "table|devstoreaccount1|t|p"],
    ["GET", `${BLOB_HOST}/photos/a%20b`, undefined, undefined, "blob|acct|photos|a b"],
    ["GET", `${BLOB_HOST}/photos/a|b`, undefined, undefined, "blob|acct|photos|a\\|b"],
    ["GET", "http://127.0.0.1:99999/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", undefined],
    ["GET", "ftp://127.0.0.1/devstoreaccount1/t(PartitionKey='p',RowKey='r')", undefined, "table", undefined],
  ])("%s %s falls back and agrees", (method, url, body, service, key) => {
    const { answer, slow } = read({ method, url, body }, service);
    expect(slow).toBe(true);
    expect(answer?.key).toBe(key);
    expect(answer).toEqual(expected({ method, url, body }, service));
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
      expect(() => requestScopeKey(request as ScopeKeyRequest, "table")).not.toThrow();
    }
    expect(requestScopeKey(requests[6] as ScopeKeyRequest, "table")).toEqual(table("table|devstoreaccount1|orders"));
    expect(requestScopeKey(requests[5] as ScopeKeyRequest, "table")).toEqual(table("table|devstoreaccount1|t|p"));
  });
});

const services = fc.constantFrom<StorageService | undefined>(undefined, "table", "blob", "queue");

/** Origins the fast path learns, next to ones it must leave to the slow path. */
const origin = fc.constantFrom(
  "http://127.0.0.1:10002",
  "http://127.0.0.1:10000",
  "http://127.0.0.1:1000",
  "http://localhost:10001",
  "http://azurite:10002",
  "http://[::1]:10002",
  "http://host.docker.internal:10002",
  "https://acct.table.core.windows.net",
  "https://acct-secondary.table.core.windows.net",
  "https://ACCT.Table.Core.Windows.Net",
  "https://acct.blob.core.windows.net",
  "https://acct.queue.core.windows.net",
  "https://acct.z12.blob.storage.azure.net",
  "https://acct.table.cosmos.azure.com",
  "http://acct.table.localhost:10002",
  "https://files.example.com",
  "https://files.example.com:443",
  "HTTP://127.0.0.1:10002",
  "http://user@127.0.0.1:10002",
  "http://127.0.0.1:99999",
  "ftp://127.0.0.1",
);

/** Pieces the fast path reads as written: path structure, Tables syntax, queries and fragments. */
const plainPiece = fc.constantFrom(
  "/", "/devstoreaccount1", "/devstoreaccount1-secondary", "/-secondary", "/acct", "/orders", "/bench", "/Tables", "/TablesX", "/$batch", "/$root", "/c",
  "(", ")", "()", "'", "''", ",", "=", "PartitionKey=", "RowKey=", "PartitionKey='p'", "RowKey='r'", "'p1'", "'O''Brien'",
  "(PartitionKey='p17',RowKey='r1')", "(RowKey='r',PartitionKey='p')", "('x')", "(PartitionKey='',RowKey='')",
  ".", "..", "/.", "/..", ".x", "$", "~", "!", "*", ";", ":", "@", "&", "+", "[", "]", "-secondary",
  "?", "#", "?$filter=PartitionKey%20eq%20'p'", "?$filter=PartitionKey eq 'p'", "?%24filter=PartitionKey%20eq%20'p'",
  "?$filter=RowKey%20eq%20'r'", "?$select=a,b", "?$top=5", "?comp=acl", "&", "$filter", "#$filter=x", "?timeout=30", "?a=%20",
);

/** Pieces the fast path must leave to the slow one (escapes, characters the URL parser rewrites, key separators), plus arbitrary text. */
const messyPiece = fc.oneof(
  fc.constantFrom(
    " ", "%", "%2", "%20", "%27", "%28", "%2F", "%2e", "%24", "%C3%A9", "%zz", "|", "\\", "é", "\u{1F600}", "\uD800", "\t", "\n", "\u007f", "\u0000",
    "^", "`", "{", "}", "<", ">", '"',
  ),
  fc.string({ unit: "binary-ascii", maxLength: 4 }),
  fc.string({ unit: "binary", maxLength: 3 }),
);

const piece = fc.oneof({ weight: 4, arbitrary: plainPiece }, { weight: 1, arbitrary: messyPiece });

const method = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom("GET", "PUT", "PATCH", "MERGE", "DELETE", "POST", "HEAD", "get", "post", "Post", "") },
  { weight: 1, arbitrary: fc.string({ maxLength: 5 }) },
);

const body = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom("", '{"PartitionKey":"pb","RowKey":"r"}', '{"TableName":"tb"}', '{"PartitionKey":1}', "garbage"),
  fc.constant(
    ["--b", "", `POST ${AZ}/t HTTP/1.1`, "", '{"PartitionKey":"pb","RowKey":"r"}', "--b--"].join("\r\n"),
  ),
  fc.string({ unit: "binary", maxLength: 8 }),
  fc.constant(Buffer.from('{"PartitionKey":"pb"}')),
);

/** A Tables entity address with arbitrary keys: the shape the fastest path reads, and its near misses. */
const entityUrl = fc
  .tuple(
    origin,
    fc.constantFrom("/devstoreaccount1", "/devstoreaccount1-secondary", "", "/a-b"),
    fc.constantFrom("/orders", "/t1", "/Tables", "/1t", "/t_x", "/$batch"),
    fc.string({
      unit: fc.constantFrom(
        "a", "'", "''", "%", "%27", "%2527", "(", ")", ",", "=", "|", "\\", "/", ".", "é", " ", "?", "#", "~", "!",
        "%20", "%7C", "%7c", "%5C", "%2F", "%C3", "%A9", "%C3%A9", "%E2%82%AC", "%F0%9F%9A%80", "%zz", "%2",
      ),
      maxLength: 6,
    }),
    fc.string({ unit: fc.constantFrom("r", "'", "%2F", "%27", "%C3", "%20", ")", ",", "é"), maxLength: 3 }),
    fc.constantFrom("", "?timeout=30", "?$filter=x", "#f", "/", "x"),
  )
  .map(([o, account, name, pk, rk, tail]) => `${o}${account}${name}(PartitionKey='${pk}',RowKey='${rk}')${tail}`);

const anyUrl = fc.oneof(
  fc.tuple(origin, fc.array(plainPiece, { maxLength: 10 })).map(([o, parts]) => o + parts.join("")),
  fc.tuple(origin, fc.array(piece, { maxLength: 10 })).map(([o, parts]) => o + parts.join("")),
  entityUrl,
);

describe("requestScopeKey (property)", () => {
  it("gives exactly scopeKey(extractScope(...)) and its service, with the origin caches warm or cold", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(method, anyUrl, body, services), { minLength: 1, maxLength: 4 }), (requests) => {
        // Several requests in a row, so the remembered origin is sometimes another one.
        for (const [m, url, b, service] of requests) {
          const request = { method: m, url, body: b };
          const want = expected(request, service);
          expect(requestScopeKey(request, service)).toEqual(want);
          expect(requestScopeKey(request, service)).toEqual(want);
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it("agrees on entity addresses with arbitrary keys, as the SDK encodes them", () => {
    fc.assert(
      fc.property(origin, fc.string({ unit: "grapheme", maxLength: 8 }), services, (o, pk, service) => {
        const encoded = encodeURIComponent(pk.replace(/'/g, "''"));
        for (const literal of [encoded, pk]) {
          const request = { method: "GET", url: `${o}/devstoreaccount1/orders(PartitionKey='${literal}',RowKey='r')` };
          expect(requestScopeKey(request, service)).toEqual(expected(request, service));
        }
      }),
      { numRuns: 5_000 },
    );
  });
});
