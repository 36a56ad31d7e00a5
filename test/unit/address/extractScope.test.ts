import { describe, expect, it } from "vitest";
import { extractScope } from "../../../src/address/extractScope.js";
import { captureTableRequests } from "../../support/captureTableRequests.js";

const AZ = "http://127.0.0.1:10002/devstoreaccount1";
const HOST = "https://myacct.table.core.windows.net";

function table(resource: string, partition?: string) {
  return partition === undefined
    ? { service: "table", account: "devstoreaccount1", resource }
    : { service: "table", account: "devstoreaccount1", resource, partition };
}

describe("extractScope: Tables entity addresses", () => {
  it.each([
    ["/orders(PartitionKey='pk',RowKey='rk')", "pk"],
    ["/orders(PartitionKey='',RowKey='')", ""],
    ["/orders(PartitionKey='O''Brien',RowKey='r')", "O'Brien"],
    ["/orders(PartitionKey='a''''b',RowKey='r')", "a''b"],
    ["/orders(PartitionKey='p%20q',RowKey='r')", "p q"],
    ["/orders(PartitionKey=%27x%27%27%27,RowKey='r')", "x'"],
    ["/orders(PartitionKey='a%2Cb)c',RowKey='r')", "a,b)c"],
    ["/orders(PartitionKey='a%2Fb',RowKey='r')", "a/b"],
    ["/orders(PartitionKey='%C3%BCn%C3%AF%F0%9F%9A%80',RowKey='r')", "ünï🚀"],
    ["/orders(PartitionKey='ünï',RowKey='r')", "ünï"],
    ["/orders(PartitionKey='pk',RowKey='rk')?$select=a,b&timeout=5", "pk"],
    ["/orders(RowKey='rk',PartitionKey='pk')", "pk"],
    ["/orders(PartitionKey = 'pk', RowKey = 'rk')", "pk"],
  ])("GET %s pins %j", (path, partition) => {
    expect(extractScope({ method: "GET", url: AZ + path }, "table")).toEqual(table("orders", partition));
  });

  it("reads host-style URLs without a service hint", () => {
    expect(extractScope({ method: "DELETE", url: `${HOST}/orders(PartitionKey='p',RowKey='r')` })).toEqual({
      service: "table",
      account: "myacct",
      resource: "orders",
      partition: "p",
    });
  });

  it("recognises Tables-only shapes on path-style URLs without a hint", () => {
    expect(extractScope({ method: "PUT", url: `${AZ}/orders(PartitionKey='p',RowKey='r')` })).toEqual(table("orders", "p"));
    expect(extractScope({ method: "GET", url: `${AZ}/Tables` })).toEqual(table(""));
    expect(extractScope({ method: "GET", url: `${AZ}/orders` })).toBeUndefined();
  });

  it("matches what the real TableClient sends for getEntity, update and delete", async () => {
    const pk = "p'1 é/x?#%";
    const requests = await captureTableRequests(async (client) => {
      await client.getEntity(pk, "r'1").catch(() => undefined);
      await client.updateEntity({ partitionKey: pk, rowKey: "r" }, "Merge").catch(() => undefined);
      await client.upsertEntity({ partitionKey: pk, rowKey: "r" }, "Replace").catch(() => undefined);
      await client.deleteEntity(pk, "r").catch(() => undefined);
    });
    expect(requests.map((r) => r.method)).toEqual(["GET", "PATCH", "PUT", "DELETE"]);
    for (const request of requests) {
      expect(extractScope(request, "table")).toEqual(table("orders", pk));
    }
  });
});

describe("extractScope: Tables inserts", () => {
  it("reads the PartitionKey from a JSON insert body", () => {
    const body = JSON.stringify({ RowKey: "r", PartitionKey: "pk \"q\" \u00e9", v: 1 });
    expect(extractScope({ method: "POST", url: `${AZ}/orders`, body }, "table")).toEqual(table("orders", 'pk "q" é'));
  });

  it("matches what the real TableClient sends for createEntity", async () => {
    const [request] = await captureTableRequests((client) => client.createEntity({ partitionKey: "ü'1", rowKey: "r" }));
    expect(request?.method).toBe("POST");
    expect(extractScope(request!, "table")).toEqual(table("orders", "ü'1"));
  });

  it("falls back to a pattern for a body that is not quite JSON", () => {
    const body = '{"PartitionKey":"p\\"1","RowKey":"r", trailing';
    expect(extractScope({ method: "POST", url: `${AZ}/orders`, body }, "table")).toEqual(table("orders", 'p"1'));
  });

  it("is table-wide when the body names no PartitionKey", () => {
    for (const body of [undefined, "", "[]", "null", '{"PartitionKey":1}', "garbage"]) {
      expect(extractScope({ method: "POST", url: `${AZ}/orders`, body }, "table")).toEqual(table("orders"));
    }
  });
});

describe("extractScope: Tables queries", () => {
  it.each([
    ["PartitionKey eq 'pk'", "pk"],
    ["PartitionKey eq 'p''k' and RowKey gt 'a'", "p'k"],
    ["RowKey gt 'a' and PartitionKey eq 'ü'", "ü"],
  ])("a filter %j pins %j", (filter, partition) => {
    const url = `${AZ}/orders()?$filter=${encodeURIComponent(filter)}&$top=10`;
    expect(extractScope({ method: "GET", url }, "table")).toEqual(table("orders", partition));
  });

  it("reads a filter that is not percent-encoded", () => {
    const url = `${AZ}/orders()?$filter=PartitionKey eq 'pk'`;
    expect(extractScope({ method: "GET", url }, "table")).toEqual(table("orders", "pk"));
  });

  it("keeps a literal + in a key", () => {
    const url = `${AZ}/orders()?$filter=PartitionKey%20eq%20'a+b'`;
    expect(extractScope({ method: "GET", url }, "table")).toEqual(table("orders", "a+b"));
  });

  it.each([
    "",
    "?$filter=" + encodeURIComponent("PartitionKey eq 'a' or PartitionKey eq 'b'"),
    "?$filter=" + encodeURIComponent("PartitionKey ge 'a'"),
    "?$filter=" + encodeURIComponent("RowKey eq 'a'"),
    "?$top=5",
    "?NextPartitionKey=1!8!YQ--&NextRowKey=1!8!cg--",
  ])("a cross-partition query %j is table-wide", (query) => {
    expect(extractScope({ method: "GET", url: `${AZ}/orders()${query}` }, "table")).toEqual(table("orders"));
  });

  it("matches what the real TableClient sends for listEntities with a PartitionKey filter", async () => {
    const requests = await captureTableRequests(async (client) => {
      for await (const _ of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'p''x' and RowKey gt 'a'" } })) {
        break;
      }
    });
    expect(extractScope(requests[0]!, "table")).toEqual(table("orders", "p'x"));
  });
});

describe("extractScope: Tables table operations", () => {
  it.each([
    ["GET", "/Tables", undefined, ""],
    ["GET", "/Tables?$filter=TableName%20eq%20'x'", undefined, ""],
    ["POST", "/Tables", '{"TableName":"orders"}', "orders"],
    ["DELETE", "/Tables('orders')", undefined, "orders"],
    ["DELETE", "/Tables('o''rders')", undefined, "o'rders"],
    ["GET", "/orders?comp=acl", undefined, "orders"],
    ["PUT", "/orders?comp=acl", "<xml/>", "orders"],
    ["GET", "/?restype=service&comp=properties", undefined, ""],
    ["GET", "", undefined, ""],
  ])("%s %s is resource-wide (%j)", (method, path, body, resource) => {
    expect(extractScope({ method, url: AZ + path, body }, "table")).toEqual(table(resource));
  });
});

describe("extractScope: Blob", () => {
  const BLOB = "https://myacct.blob.core.windows.net";
  it.each([
    ["/photos/cat.png", "photos", "cat.png"],
    ["/photos/2024/01/cat.png?comp=block&blockid=AA%3D%3D", "photos", "2024/01/cat.png"],
    ["/photos/a%20b%2Fc%C3%A9", "photos", "a b/cé"],
    ["/photos/dir//x", "photos", "dir//x"],
  ])("%s is the blob's partition", (path, container, blob) => {
    expect(extractScope({ method: "PUT", url: BLOB + path })).toEqual({
      service: "blob",
      account: "myacct",
      resource: container,
      partition: blob,
    });
  });

  it("is container-wide for container operations and account-wide at the root", () => {
    expect(extractScope({ method: "PUT", url: `${BLOB}/photos?restype=container` })).toEqual({ service: "blob", account: "myacct", resource: "photos" });
    expect(extractScope({ method: "GET", url: `${BLOB}/photos/?restype=container&comp=list` })).toEqual({
      service: "blob",
      account: "myacct",
      resource: "photos",
    });
    expect(extractScope({ method: "GET", url: `${BLOB}/?comp=list` })).toEqual({ service: "blob", account: "myacct", resource: "" });
  });

  it("uses the service hint for Azurite path-style URLs", () => {
    expect(extractScope({ method: "GET", url: "http://127.0.0.1:10000/devstoreaccount1/c/b/x" }, "blob")).toEqual({
      service: "blob",
      account: "devstoreaccount1",
      resource: "c",
      partition: "b/x",
    });
  });
});

describe("extractScope: Queue", () => {
  it("is queue-wide, never a partition", () => {
    const QUEUE = "https://myacct.queue.core.windows.net";
    expect(extractScope({ method: "POST", url: `${QUEUE}/jobs/messages?visibilitytimeout=5` })).toEqual({
      service: "queue",
      account: "myacct",
      resource: "jobs",
    });
    expect(extractScope({ method: "DELETE", url: `${QUEUE}/jobs/messages/abc?popreceipt=x` })).toEqual({
      service: "queue",
      account: "myacct",
      resource: "jobs",
    });
    expect(extractScope({ method: "GET", url: `${QUEUE}/?comp=list` })).toEqual({ service: "queue", account: "myacct", resource: "" });
  });
});

describe("extractScope: garbage", () => {
  it.each([
    { method: "GET", url: "" },
    { method: "GET", url: "::::" },
    { method: "GET", url: "http://127.0.0.1:10002/" },
    { method: "GET", url: "https://example.com/" },
    { method: "", url: "mailto:x@y" },
  ])("returns undefined for %j", (request) => {
    expect(extractScope(request)).toBeUndefined();
  });

  it("never throws on values that break the declared types", () => {
    const bad = [null, undefined, 42, "str", {}, { url: 5 }, { method: 5, url: `${AZ}/Tables` }, { url: `${AZ}/$batch`, body: 7 }];
    for (const request of bad) {
      expect(() => extractScope(request as never, "table")).not.toThrow();
    }
  });

  it("is resource-wide for malformed entity addresses", () => {
    for (const path of ["/orders(PartitionKey='unterminated", "/orders(PartitionKey=''x''',RowKey='r')", "/orders(PartitionKey=pk)", "/orders(", "/orders(PartitionKey='a'"]) {
      const scope = extractScope({ method: "GET", url: AZ + path }, "table");
      expect(scope?.partition).toBeUndefined();
    }
  });
});
