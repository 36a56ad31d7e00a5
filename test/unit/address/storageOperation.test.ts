import { describe, expect, it } from "vitest";
import { createHttpHeaders } from "@azure/core-rest-pipeline";
import type { TableClient } from "@azure/data-tables";
import { type StorageService } from "../../../src/index.js";
import { STORAGE_OPERATIONS, storageOperationName, type StorageOperation } from "../../../src/address/storageOperation.js";
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
