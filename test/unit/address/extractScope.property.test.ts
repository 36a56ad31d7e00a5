import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractScope } from "../../../src/address/extractScope.js";
import { scopeKey, type StorageService } from "../../../src/address/partitionScope.js";

const services = fc.constantFrom<StorageService | undefined>(undefined, "table", "blob", "queue");

/** Strings that look enough like storage requests to reach the deeper parsers. */
const storageLike = fc.oneof(
  fc.string({ unit: "binary" }),
  fc
    .tuple(
      fc.constantFrom("http://127.0.0.1:10002/devstoreaccount1/", "https://a.table.core.windows.net/", "https://a.blob.core.windows.net/"),
      fc.array(fc.constantFrom("orders", "(", ")", "'", "''", "PartitionKey=", ",", "RowKey=", "%", "%2", "%C3", "$batch", "Tables", "/", "?$filter=", " eq ", " and ", " or "), { maxLength: 12 }),
    )
    .map(([base, parts]) => base + parts.join("")),
);

describe("extractScope (property)", () => {
  it("never throws, and any scope it returns has a usable key", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), storageLike, fc.option(fc.string({ unit: "binary" }), { nil: undefined }), services, (method, url, body, service) => {
        const scope = extractScope({ method, url, body }, service);
        if (scope !== undefined) expect(typeof scopeKey(scope)).toBe("string");
      }),
      { numRuns: 3000 },
    );
  });

  it("round-trips any PartitionKey through an entity address", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (pk) => {
        const encoded = encodeURIComponent(pk.replace(/'/g, "''"));
        const url = `http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='${encoded}',RowKey='r')`;
        expect(extractScope({ method: "GET", url }, "table")?.partition).toBe(pk);
      }),
    );
  });

  it("round-trips any PartitionKey through an equality filter", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (pk) => {
        const filter = `PartitionKey eq '${pk.replace(/'/g, "''")}' and RowKey ne ''`;
        const url = `http://127.0.0.1:10002/devstoreaccount1/t()?$filter=${encodeURIComponent(filter)}`;
        expect(extractScope({ method: "GET", url }, "table")?.partition).toBe(pk);
      }),
    );
  });

  it("round-trips any PartitionKey through a $batch body", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (pk) => {
        const encoded = encodeURIComponent(pk.replace(/'/g, "''"));
        const body = [
          "--batch_a",
          "content-type: multipart/mixed; boundary=changeset_b",
          "",
          "--changeset_b",
          "",
          `DELETE http://127.0.0.1:10002/devstoreaccount1/t(PartitionKey='${encoded}',RowKey='r') HTTP/1.1`,
          "If-Match: *",
          "",
          "--changeset_b",
          "",
          "POST http://127.0.0.1:10002/devstoreaccount1/t HTTP/1.1",
          "",
          JSON.stringify({ PartitionKey: pk, RowKey: "s" }),
          "--changeset_b--",
          "--batch_a--",
        ].join("\r\n");
        const scope = extractScope({ method: "POST", url: "http://127.0.0.1:10002/devstoreaccount1/$batch", body }, "table");
        expect(scope).toEqual({ service: "table", account: "devstoreaccount1", resource: "t", partition: pk });
      }),
    );
  });
});
