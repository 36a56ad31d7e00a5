import { createHttpHeaders, createPipelineRequest, type PipelineRequest } from "@azure/core-rest-pipeline";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { EntityOperationNames, MAX_REMEMBERED_METHODS } from "../../../src/address/entityOperationNames.js";
import { readRequestAddress } from "../../../src/address/requestAddress.js";
import { storageOperationName } from "../../../src/address/storageOperation.js";

const AZ = "http://127.0.0.1:10002/devstoreaccount1";

function request(method: string, url: string, headers: Record<string, string> = {}): PipelineRequest {
  return createPipelineRequest({ method: method as PipelineRequest["method"], url, headers: createHttpHeaders(headers) });
}

/** The operation an install's address names, with `names` shared across its requests. */
function named(names: EntityOperationNames, r: PipelineRequest): string {
  return readRequestAddress(r, "table", names).operation;
}

describe("EntityOperationNames", () => {
  it("recalls a method's name on the same table's other entity addresses, and nothing else", () => {
    const names = new EntityOperationNames();
    expect(names.recall("GET", `${AZ}/orders(PartitionKey='p',RowKey='r')`)).toBeUndefined();
    expect(named(names, request("GET", `${AZ}/orders(PartitionKey='p',RowKey='r')`))).toBe("get_entity");
    expect(names.recall("GET", `${AZ}/orders(PartitionKey='p2',RowKey='r%202')`)).toBe("get_entity");
    // Not learnt yet, another table, a query, a key group followed by more, a URL that is not keys alone.
    expect(names.recall("DELETE", `${AZ}/orders(PartitionKey='p',RowKey='r')`)).toBeUndefined();
    expect(names.recall("GET", `${AZ}/orders2(PartitionKey='p',RowKey='r')`)).toBeUndefined();
    expect(names.recall("GET", `${AZ}/orders(PartitionKey='p',RowKey='r')?$select=a`)).toBeUndefined();
    expect(names.recall("GET", `${AZ}/orders(PartitionKey='p',RowKey='r')/x(y)`)).toBeUndefined();
    expect(names.recall("GET", `${AZ}/orders()`)).toBeUndefined();
    expect(names.recall("GET", `${AZ}/orders(PartitionKey='a\\b',RowKey='r')`)).toBeUndefined();
    expect(names.recall("GET", `${AZ}/orders(PartitionKey='ü',RowKey='r')`)).toBeUndefined();
  });

  it("does not learn a table whose text holds an escape: decoded or not, its segment may read otherwise", () => {
    const names = new EntityOperationNames();
    // `Tables%28(x)` decodes to `Tables((x)`, a Tables operation; `Tables%28(%ZZ)` does not decode, an entity address.
    expect(named(names, request("GET", `${AZ}/Tables%28(x)`))).toBe("query_tables");
    expect(named(names, request("GET", `${AZ}/Tables%28(%ZZ)`))).toBe("get_entity");
    expect(names.size).toBe(0);
  });

  it("does not learn updates, whose name reads the If-Match header", () => {
    const names = new EntityOperationNames();
    const url = `${AZ}/orders(PartitionKey='p',RowKey='r')`;
    expect(named(names, request("PATCH", url, { "if-match": "*" }))).toBe("update_entity");
    expect(named(names, request("PATCH", url))).toBe("upsert_entity");
    expect(named(names, request("put", url))).toBe("upsert_entity");
    expect(names.size).toBe(0);
  });

  it("keeps one table's names, at most MAX_REMEMBERED_METHODS of them, whatever it is sent", () => {
    const names = new EntityOperationNames();
    for (let i = 0; i < 50; i++) {
      named(names, request(`VERB${i}`, `${AZ}/orders(PartitionKey='p',RowKey='r${i}')`));
      expect(names.size).toBeLessThanOrEqual(MAX_REMEMBERED_METHODS);
    }
    expect(names.size).toBe(MAX_REMEMBERED_METHODS);
    // Another table: the last one's names go.
    for (let i = 0; i < 1_000; i++) named(names, request("GET", `${AZ}/t${i}(PartitionKey='p',RowKey='r')`));
    expect(names.size).toBe(1);
    expect(names.recall("GET", `${AZ}/t999(PartitionKey='q',RowKey='s')`)).toBe("get_entity");
    expect(names.recall("GET", `${AZ}/t998(PartitionKey='q',RowKey='s')`)).toBeUndefined();
  });
});

// Tables share their text before the keys; keys and methods vary, with the characters that make readers differ.
const prefix = fc.constantFrom(
  `${AZ}/orders`,
  `${AZ}/Tables`,
  `${AZ}/x/../orders`,
  `${AZ}/`,
  "https://acct.table.core.windows.net/orders",
  "HTTP://127.0.0.1:10002/devstoreaccount1/orders",
  "http://127.0.0.1:80/devstoreaccount1/o",
  "https://acct.table.core.windows.net",
  "http://[::1]:10002/devstoreaccount1/orders",
  `${AZ}/o%28`,
  `${AZ}/Tables%28`,
);
const keyPiece = fc.oneof(
  fc.constantFrom("PartitionKey='p'", ",RowKey='r'", "''", "(", ")", "%", "%2", "%20", "%28", "%29", "%2F", "%ZZ", "%C3", "/", "?", "#", "\\", " ", "\t", "é", ".", ".."),
  fc.string({ maxLength: 3 }),
);
const tail = fc.oneof(
  fc.array(keyPiece, { maxLength: 6 }).map((pieces) => `(${pieces.join("")})`),
  fc.array(keyPiece, { maxLength: 6 }).map((pieces) => pieces.join("")),
);
const method = fc.constantFrom("GET", "get", "DELETE", "HEAD", "POST", "PUT", "PATCH", "MERGE", "OPTIONS");
const ifMatch = fc.constantFrom<Record<string, string>>({}, { "if-match": "*" });

describe("EntityOperationNames (property)", () => {
  it("names every request of a sequence as storageOperationName does", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(method, prefix, tail, ifMatch), { minLength: 1, maxLength: 12 }), (sequence) => {
        const names = new EntityOperationNames();
        for (const [m, p, t, headers] of sequence) {
          const r = request(m, p + t, headers);
          expect(named(names, r)).toBe(storageOperationName("table", r));
        }
      }),
      { numRuns: 3_000 },
    );
  });
});
