import { describe, expect, it } from "vitest";
import { createHttpHeaders } from "@azure/core-rest-pipeline";
import type { TableClient } from "@azure/data-tables";
import { STORAGE_OPERATIONS, storageOperationName, type StorageOperation, type StorageService } from "../../../src/index.js";
import { OperationNamer, accountBase } from "../../../src/metrics/operationNamer.js";
import { captureTableRequests } from "../../support/captureTableRequests.js";

const T = "https://acct.table.core.windows.net";
const B = "https://acct.blob.core.windows.net";
const Q = "https://acct.queue.core.windows.net";
const AZ = "http://127.0.0.1:10002/devstoreaccount1";
const entity = "orders(PartitionKey='p1',RowKey='r1')";

type Row = [StorageService, string, string, Record<string, string>, StorageOperation];

const ROWS: Row[] = [
  // Tables
  ["table", "GET", `${T}/orders()`, {}, "query_entities"],
  ["table", "GET", `${T}/orders?$filter=PartitionKey%20eq%20'p1'`, {}, "query_entities"],
  ["table", "GET", `${T}/${entity}`, {}, "get_entity"],
  ["table", "POST", `${T}/orders`, {}, "insert_entity"],
  ["table", "PUT", `${T}/${entity}`, { "if-match": "W/\"datetime'2024'\"" }, "update_entity"],
  ["table", "PUT", `${T}/${entity}`, { "if-match": "*" }, "update_entity"],
  ["table", "PATCH", `${T}/${entity}`, { "if-match": "*" }, "update_entity"],
  ["table", "MERGE", `${T}/${entity}`, { "if-match": "*" }, "update_entity"],
  ["table", "PUT", `${T}/${entity}`, {}, "upsert_entity"],
  ["table", "PATCH", `${T}/${entity}`, {}, "upsert_entity"],
  ["table", "DELETE", `${T}/${entity}`, { "if-match": "*" }, "delete_entity"],
  ["table", "POST", `${T}/$batch`, {}, "batch"],
  ["table", "POST", `${T}/Tables`, {}, "create_table"],
  ["table", "DELETE", `${T}/Tables('orders')`, {}, "delete_table"],
  ["table", "GET", `${T}/Tables`, {}, "query_tables"],
  ["table", "GET", `${T}/Tables('orders')`, {}, "query_tables"],
  ["table", "GET", `${T}/orders?comp=acl`, {}, "other"],
  ["table", "GET", `${T}/?restype=service&comp=properties`, {}, "other"],
  ["table", "GET", `${T}/orders(PartitionKey='a''b%2Fc',RowKey='(x)')`, {}, "get_entity"],
  ["table", "GET", `${T}/orders(PartitionKey='unterminated`, {}, "other"],
  ["table", "GET", `${T}/Tablesque()`, {}, "query_entities"],
  ["table", "GET", `${AZ}/${entity}`, {}, "get_entity"],
  ["table", "POST", `${AZ}/$batch`, {}, "batch"],
  ["table", "GET", "not a url", {}, "other"],
  // Blob
  ["blob", "GET", `${B}/?comp=list`, {}, "list_containers"],
  ["blob", "PUT", `${B}/photos?restype=container`, {}, "create_container"],
  ["blob", "DELETE", `${B}/photos?restype=container`, {}, "delete_container"],
  ["blob", "GET", `${B}/photos?restype=container`, {}, "get_container_properties"],
  ["blob", "GET", `${B}/photos?restype=container&comp=list&prefix=a`, {}, "list_blobs"],
  ["blob", "PUT", `${B}/photos?restype=container&comp=acl`, {}, "other"],
  ["blob", "PUT", `${B}/photos/2024/cat.jpg`, { "x-ms-blob-type": "BlockBlob" }, "upload_blob"],
  ["blob", "PUT", `${B}/photos/cat.jpg`, { "x-ms-copy-source": "https://x/y" }, "copy_blob"],
  ["blob", "GET", `${B}/photos/2024/cat.jpg`, {}, "download_blob"],
  ["blob", "HEAD", `${B}/photos/cat.jpg`, {}, "get_blob_properties"],
  ["blob", "DELETE", `${B}/photos/cat.jpg`, {}, "delete_blob"],
  ["blob", "PUT", `${B}/photos/cat.jpg?comp=block&blockid=AAAA`, {}, "put_block"],
  ["blob", "PUT", `${B}/photos/cat.jpg?comp=blocklist`, {}, "put_block_list"],
  ["blob", "GET", `${B}/photos/cat.jpg?comp=blocklist`, {}, "other"],
  ["blob", "PUT", `${B}/logs/app.log?comp=appendblock`, {}, "append_block"],
  ["blob", "PUT", `${B}/photos/cat.jpg?comp=metadata`, {}, "other"],
  ["blob", "POST", `${B}/?comp=batch`, {}, "batch"],
  ["blob", "POST", `${B}/photos?restype=container&comp=batch`, {}, "batch"],
  ["blob", "GET", "http://127.0.0.1:10000/devstoreaccount1/photos/cat.jpg", {}, "download_blob"],
  // Queue
  ["queue", "GET", `${Q}/?comp=list`, {}, "list_queues"],
  ["queue", "PUT", `${Q}/jobs`, {}, "create_queue"],
  ["queue", "DELETE", `${Q}/jobs`, {}, "delete_queue"],
  ["queue", "GET", `${Q}/jobs?comp=metadata`, {}, "get_queue_properties"],
  ["queue", "PUT", `${Q}/jobs?comp=metadata`, {}, "other"],
  ["queue", "POST", `${Q}/jobs/messages?visibilitytimeout=0`, {}, "send_message"],
  ["queue", "GET", `${Q}/jobs/messages?numofmessages=32`, {}, "receive_messages"],
  ["queue", "GET", `${Q}/jobs/messages?peekonly=true`, {}, "peek_messages"],
  ["queue", "DELETE", `${Q}/jobs/messages`, {}, "clear_messages"],
  ["queue", "DELETE", `${Q}/jobs/messages/abc-123?popreceipt=xyz`, {}, "delete_message"],
  ["queue", "PUT", `${Q}/jobs/messages/abc-123?popreceipt=xyz&visibilitytimeout=5`, {}, "update_message"],
  ["queue", "GET", `${Q}/jobs/other`, {}, "other"],
  ["queue", "POST", "http://127.0.0.1:10001/devstoreaccount1/jobs/messages", {}, "send_message"],
];

const asRequest = (method: string, url: string, headers: Record<string, string>) => ({ method, url, headers: createHttpHeaders(headers) });

describe("storageOperationName", () => {
  it.each(ROWS)("%s %s %s %j -> %s", (service, method, url, headers, expected) => {
    expect(storageOperationName(service, asRequest(method, url, headers))).toBe(expected);
  });

  it("only ever answers names from STORAGE_OPERATIONS", () => {
    for (const [service, method, url, headers] of ROWS) {
      expect(STORAGE_OPERATIONS).toContain(storageOperationName(service, asRequest(method, url, headers)));
    }
  });

  it("names what the real TableClient sends", async () => {
    const cases: Array<[(c: TableClient) => Promise<unknown>, StorageOperation]> = [
      [(c) => c.createEntity({ partitionKey: "p", rowKey: "r" }), "insert_entity"],
      [(c) => c.getEntity("p", "r"), "get_entity"],
      [(c) => c.listEntities({ queryOptions: { filter: "PartitionKey eq 'p'" } }).next(), "query_entities"],
      [(c) => c.updateEntity({ partitionKey: "p", rowKey: "r" }, "Merge"), "update_entity"],
      [(c) => c.updateEntity({ partitionKey: "p", rowKey: "r" }, "Replace", { etag: "W/\"x\"" }), "update_entity"],
      [(c) => c.upsertEntity({ partitionKey: "p", rowKey: "r" }, "Merge"), "upsert_entity"],
      [(c) => c.upsertEntity({ partitionKey: "p", rowKey: "r" }, "Replace"), "upsert_entity"],
      [(c) => c.deleteEntity("p", "r"), "delete_entity"],
      [(c) => c.submitTransaction([["create", { partitionKey: "p", rowKey: "r" }]]), "batch"],
      [(c) => c.createTable(), "create_table"],
      [(c) => c.deleteTable(), "delete_table"],
    ];
    for (const [action, expected] of cases) {
      const [sent] = await captureTableRequests(action);
      expect(sent, String(expected)).toBeDefined();
      expect(storageOperationName("table", asRequest(sent!.method, sent!.url, sent!.headers)), `${sent!.method} ${sent!.url}`).toBe(expected);
    }
  });
});

describe("OperationNamer (the observer's fast path)", () => {
  it("answers exactly as storageOperationName, primed or not", () => {
    for (const [service, method, url, headers] of ROWS) {
      const namer = new OperationNamer(service);
      const request = asRequest(method, url, headers);
      const expected = storageOperationName(service, request);
      expect(namer.name(request), `cold ${url}`).toBe(expected);
      // Primed with another request of the same client, the fast path answers.
      namer.name(asRequest("GET", `${url.split("?")[0]}`, {}));
      expect(namer.name(request), `warm ${url}`).toBe(expected);
    }
  });

  it("a URL a parser would rewrite leaves the fast path", () => {
    const namer = new OperationNamer("table");
    namer.name(asRequest("GET", `${T}/orders()`, {}));
    const tricky = [`${T}/x/%2e%2e/${entity}`, `${T}/x/%2E%2E/orders()`, `${T}/x/../${entity}`, `${T}/./${entity}`, `${T}\\${entity}`, `${T}/orders%28PartitionKey='p',RowKey='r'%29`];
    for (const url of tricky) {
      expect(namer.name(asRequest("GET", url, {})), url).toBe(storageOperationName("table", asRequest("GET", url, {})));
    }
  });

  it("a URL a parser would strip leaves the fast path (tab, LF, CR, trailing space)", () => {
    const namer = new OperationNamer("queue");
    namer.name(asRequest("GET", `${Q}/jobs`, {}));
    const tricky = [`${Q}/jobs/mess\tages`, `${Q}/jobs/mess\nages`, `${Q}/jobs/mess\rages`, `${Q}/jobs/messages `, `${Q}/jobs/messages\t`];
    for (const url of tricky) {
      const expected = storageOperationName("queue", asRequest("POST", url, {}));
      expect(expected).toBe("send_message");
      expect(namer.name(asRequest("POST", url, {})), JSON.stringify(url)).toBe(expected);
    }
  });

  it("the Tables fast path answers as storageOperationName on tricky shapes", () => {
    const shapes = [
      "orders(PartitionKey='p%201',RowKey='r%2F%C3%A9''x')",
      "orders(PartitionKey='p',RowKey='r')?$select=a",
      "orders(PartitionKey='p',RowKey='r')#frag",
      "orders()#frag?comp=acl",
      "orders(x)?comp=acl",
      "orders?comp=acl",
      "orders(%29",
      "orders(a%29",
      "orders(a)%29",
      "orders(%)",
      "orders(a%2)",
      "orders(\t)",
      "orders(x)\n",
      "orders(\r\n)",
      "orders(x) ",
      "orders(a b)",
      "orders(a\"b)",
      "orders(é)",
      "orders(\ud800)",
      "orders(a/b)",
      "orders(a\\b)",
      "orders(a)/..",
      "orders(..)",
      "..",
      ".",
      "%2e%2e",
      "%24batch",
      "$batch",
      "$batch?x=1",
      "Tables",
      "Tables()",
      "Tables('orders')",
      "Tables(%27orders%27)",
      "Tables%28'orders')",
      "Tablesque(a)",
      "()",
      "(a)",
      "",
      "?comp=list",
      "#",
      "ord ers(a)",
      "ord%20ers(a)",
      "orders(a",
      "orders)",
    ];
    const methods = ["GET", "PUT", "PATCH", "MERGE", "DELETE", "POST", "HEAD", "get", "merge"];
    for (const origin of [T, AZ]) {
      const namer = new OperationNamer("table");
      namer.name(asRequest("GET", `${origin}/orders()`, {}));
      for (const shape of shapes) {
        for (const method of methods) {
          for (const headers of [{}, { "if-match": "*" }] as Array<Record<string, string>>) {
            const request = asRequest(method, `${origin}/${shape}`, headers);
            expect(namer.name(request), `${method} ${request.url} ${JSON.stringify(headers)}`).toBe(storageOperationName("table", request));
          }
        }
      }
    }
  });

  it.each([
    ["table", T, AZ],
    ["blob", B, "http://127.0.0.1:10000/devstoreaccount1"],
    ["queue", Q, "http://127.0.0.1:10001/devstoreaccount1"],
  ] as const)("answers as storageOperationName on random %s paths", (service, hostStyle, pathStyle) => {
    // Pieces that move the answer or the fast paths' bounds; a fixed seed keeps failures reproducible.
    const pieces = [
      ...["orders", "Tables", "$batch", "(", ")", "'", "=", ",", "PartitionKey", "photos", "jobs", "messages", "restype=container"],
      ...["%", "%29", "%28", "%2e", "%2E", "%24", "%20", "%2F", "%C3%A9", "%E0%A4%A", "/", "\\", ".", "..", "?", "#", "&"],
      ...["comp=acl", "comp=list", "comp=block", "comp=metadata", "peekonly=true", " ", "\t", "\n", "\r", "\u0001", "\"", "é", "x"],
    ];
    let seed = 12345;
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const methods = ["GET", "PUT", "MERGE", "DELETE", "POST", "HEAD", "patch"];
    for (const origin of [hostStyle, pathStyle]) {
      const namer = new OperationNamer(service);
      namer.name(asRequest("GET", `${origin}/orders()`, {}));
      for (let i = 0; i < 3000; i++) {
        let path = ["", "orders(", "jobs/messages", "photos/"][random(4)] as string;
        const length = random(8);
        for (let k = 0; k < length; k++) path += pieces[random(pieces.length)];
        if (random(2) === 0) path += ")";
        const headers = [{}, { "if-match": "*" }, { "x-ms-copy-source": "https://x/y" }][random(3)] as Record<string, string>;
        const request = asRequest(methods[random(methods.length)] as string, `${origin}/${path}`, headers);
        expect(namer.name(request), `${request.method} ${JSON.stringify(request.url)}`).toBe(storageOperationName(service, request));
      }
    }
  });

  it.each([
    [`${T}/orders()`, `${T}/`],
    [`${AZ}/orders()`, `${AZ}/`],
    [`${AZ}`, `${AZ}/`],
    ["https://user:pw@acct.table.core.windows.net/orders", undefined],
    ["HTTPS://ACCT.table.core.windows.net/orders", undefined],
    ["ftp://acct/orders", undefined],
  ])("accountBase(%s) = %s", (url, expected) => {
    expect(accountBase(url)).toBe(expected);
  });
});
