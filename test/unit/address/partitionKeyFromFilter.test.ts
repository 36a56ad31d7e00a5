import { describe, expect, it } from "vitest";
import { partitionKeyFromFilter } from "../../../src/address/odata.js";

describe("partitionKeyFromFilter", () => {
  it.each([
    ["PartitionKey eq 'pk'", "pk"],
    ["PartitionKey eq ''", ""],
    ["PartitionKey eq 'O''Brien'", "O'Brien"],
    ["'pk' eq PartitionKey", "pk"],
    ["PartitionKey eq 'a' and RowKey gt 'r'", "a"],
    ["RowKey ge 'r' and PartitionKey eq 'a' and Age lt 3", "a"],
    ["PartitionKey eq 'a' and (RowKey eq 'x' or RowKey eq 'y')", "a"],
    ["(PartitionKey eq 'a') and RowKey eq 'x'", "a"],
    ["(PartitionKey eq 'a' and RowKey eq 'x')", "a"],
    ["PartitionKey  EQ  'a'  AND  RowKey eq 'b'", "a"],
    ["PartitionKey eq 'a and b or c'", "a and b or c"],
    ["PartitionKey eq 'ünïcødé 🚀'", "ünïcødé 🚀"],
    ["PartitionKey eq 'a' and PartitionKey eq 'a'", "a"],
    ["PartitionKey eq '(x)'", "(x)"],
  ])("%j pins %j", (filter, key) => {
    expect(partitionKeyFromFilter(filter)).toBe(key);
  });

  it.each([
    "",
    "RowKey eq 'r'",
    "PartitionKey ge 'a' and PartitionKey lt 'b'",
    "PartitionKey eq 'a' or PartitionKey eq 'b'",
    "PartitionKey eq 'a' or RowKey eq 'r'",
    "not PartitionKey eq 'a'",
    "(PartitionKey eq 'a' or PartitionKey eq 'b') and RowKey eq 'x'",
    "PartitionKey eq 'a' and PartitionKey eq 'b'",
    "PartitionKey eq 'unterminated",
    "PartitionKey eq 'a')",
    "(PartitionKey eq 'a'",
    "partitionkey eq 'a'",
    "PartitionKey ne 'a'",
  ])("%j pins nothing", (filter) => {
    expect(partitionKeyFromFilter(filter)).toBeUndefined();
  });
});
