import { describe, expect, it } from "vitest";
import type { PartitionScope } from "../../../src/address/partitionScope.js";
import { scopeKey } from "../../../src/address/partitionScope.js";

describe("scopeKey", () => {
  it("joins the fields with |", () => {
    expect(scopeKey({ service: "table", account: "acct", resource: "orders", partition: "pk-1" })).toBe("table|acct|orders|pk-1");
    expect(scopeKey({ service: "queue", account: "acct", resource: "jobs" })).toBe("queue|acct|jobs");
  });

  it("tells an empty PartitionKey from no partition", () => {
    const keyed = scopeKey({ service: "table", account: "a", resource: "t", partition: "" });
    expect(keyed).not.toBe(scopeKey({ service: "table", account: "a", resource: "t" }));
  });

  it("escapes the separator so distinct scopes never collide", () => {
    const scopes: PartitionScope[] = [
      { service: "table", account: "a", resource: "t", partition: "x|y" },
      { service: "table", account: "a", resource: "t|x", partition: "y" },
      { service: "table", account: "a", resource: "t", partition: "x\\|y" },
      { service: "table", account: "a", resource: "t", partition: "x\\" },
      { service: "table", account: "a", resource: "t\\", partition: "x" },
      { service: "blob", account: "a", resource: "t", partition: "x|y" },
    ];
    const keys = new Set(scopes.map(scopeKey));
    expect(keys.size).toBe(scopes.length);
  });

  it("is stable for equal scopes", () => {
    const a: PartitionScope = { service: "blob", account: "a", resource: "c", partition: "d/e" };
    expect(scopeKey(a)).toBe(scopeKey({ ...a }));
  });
});
