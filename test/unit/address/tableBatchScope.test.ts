import type { TransactionAction } from "@azure/data-tables";
import { describe, expect, it } from "vitest";
import { extractScope } from "../../../src/address/extractScope.js";
import { captureTableRequests, type CapturedRequest } from "../../support/captureTableRequests.js";

const PK = "p'1 é/ü,)";

async function captureBatch(actions: TransactionAction[], table = "orders"): Promise<CapturedRequest> {
  const requests = await captureTableRequests((client) => client.submitTransaction(actions), { table });
  const batch = requests.find((request) => request.url.endsWith("/$batch"));
  if (batch === undefined) throw new Error("the SDK sent no $batch request");
  return batch;
}

describe("extractScope: $batch bodies from the real SDK", () => {
  it("pins the changeset's single PartitionKey, for every action kind", async () => {
    const batch = await captureBatch([
      ["create", { partitionKey: PK, rowKey: "r1", v: 1 }],
      ["update", { partitionKey: PK, rowKey: "r'2", v: 2 }, "Merge"],
      ["update", { partitionKey: PK, rowKey: "r3" }, "Replace"],
      ["upsert", { partitionKey: PK, rowKey: "r4" }, "Merge"],
      ["upsert", { partitionKey: PK, rowKey: "r5" }, "Replace"],
      ["delete", { partitionKey: PK, rowKey: "r6" }],
    ]);
    expect(batch.body).toMatch(/changeset_/);
    expect(batch.headers["content-type"]).toMatch(/^multipart\/mixed; boundary=batch_/);
    expect(extractScope(batch)).toEqual({ service: "table", account: "devstoreaccount1", resource: "orders", partition: PK });
  });

  it("reads a batch holding only inserts (PartitionKey in the JSON bodies)", async () => {
    const batch = await captureBatch(
      [
        ["create", { partitionKey: "", rowKey: "a" }],
        ["create", { partitionKey: "", rowKey: "b" }],
      ],
      "events",
    );
    expect(extractScope(batch, "table")).toEqual({ service: "table", account: "devstoreaccount1", resource: "events", partition: "" });
  });

  it("reads a batch holding only a delete (PartitionKey only in the URL)", async () => {
    const batch = await captureBatch([["delete", { partitionKey: "solo", rowKey: "r" }]]);
    expect(extractScope(batch, "table")?.partition).toBe("solo");
  });

  it("is table-wide when sub-requests disagree on the PartitionKey", async () => {
    // The SDK refuses such a batch, so edit a real one: Azure would reject it, not rebalance it.
    const batch = await captureBatch([
      ["create", { partitionKey: "a", rowKey: "1" }],
      ["create", { partitionKey: "a", rowKey: "2" }],
    ]);
    const body = batch.body?.replace('{"PartitionKey":"a","RowKey":"2"}', '{"PartitionKey":"b","RowKey":"2"}');
    expect(body).not.toBe(batch.body);
    expect(extractScope({ ...batch, body }, "table")).toEqual({ service: "table", account: "devstoreaccount1", resource: "orders" });
  });

  it("reads LF-only bodies, MERGE verbs and relative sub-request URLs", () => {
    const body = [
      "--batch_1",
      "Content-Type: multipart/mixed; boundary=changeset_1",
      "",
      "--changeset_1",
      "Content-Type: application/http",
      "",
      "MERGE orders(PartitionKey='k',RowKey='r') HTTP/1.1",
      "Content-Type: application/json",
      "",
      '{"v":1}',
      "--changeset_1",
      "Content-Type: application/http",
      "",
      "POST orders HTTP/1.1",
      "",
      '{"PartitionKey":"k","RowKey":"s"}',
      "--changeset_1--",
      "--batch_1--",
    ].join("\n");
    const url = "https://myacct.table.core.windows.net/$batch";
    expect(extractScope({ method: "POST", url, body })).toEqual({ service: "table", account: "myacct", resource: "orders", partition: "k" });
  });

  it("is account-wide for an empty or unreadable batch", () => {
    const url = "http://127.0.0.1:10002/devstoreaccount1/$batch";
    for (const body of [undefined, "", "--batch_x\r\n--batch_x--", "GET nothing HTTP/2"]) {
      expect(extractScope({ method: "POST", url, body }, "table")).toEqual({ service: "table", account: "devstoreaccount1", resource: "" });
    }
  });
});
