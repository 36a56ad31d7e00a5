import { describe, expect, it } from "vitest";
import { entityCount } from "../../../tools/load/entityCount.js";
import { KeyedTokenBucket } from "../../../tools/load/tokenBucket.js";

describe("KeyedTokenBucket", () => {
  it("admits a second's worth at once, then the refill rate, per key", () => {
    let now = 0;
    const bucket = new KeyedTokenBucket(10, 10, () => now);
    expect(Array.from({ length: 11 }, () => bucket.take("a"))).toEqual([...Array(10).fill(true), false]);
    expect(bucket.take("b")).toBe(true);
    now = 250; // 2.5 tokens
    expect([bucket.take("a"), bucket.take("a"), bucket.take("a")]).toEqual([true, true, false]);
    now = 10_000;
    expect(bucket.take("a", 10)).toBe(true); // capped at capacity, not 97 tokens
    expect(bucket.take("a")).toBe(false);
  });

  it("a refused take costs nothing", () => {
    let now = 0;
    const bucket = new KeyedTokenBucket(10, 5, () => now);
    expect(bucket.take("a", 6)).toBe(false);
    expect(bucket.take("a", 5)).toBe(true);
    now = 100;
    expect(bucket.take("a", 2)).toBe(false);
    expect(bucket.take("a", 1)).toBe(true);
  });

  it("validates its numbers", () => {
    expect(() => new KeyedTokenBucket(0)).toThrow(RangeError);
    expect(() => new KeyedTokenBucket(5, 0)).toThrow(RangeError);
  });
});

describe("entityCount", () => {
  it("counts the operations of a $batch, 1 for anything else", () => {
    const body = [
      "--batch_1\r\nContent-Type: multipart/mixed; boundary=changeset_1\r\n\r\n--changeset_1",
      "POST http://127.0.0.1:1/devstoreaccount1/t HTTP/1.1\r\nContent-Type: application/json\r\n\r\n{}",
      "--changeset_1\r\nMERGE http://127.0.0.1:1/devstoreaccount1/t(PartitionKey='a',RowKey='b') HTTP/1.1\r\n\r\n{}",
      "--changeset_1\r\nDELETE http://127.0.0.1:1/devstoreaccount1/t(PartitionKey='a',RowKey='c') HTTP/1.1\r\n\r\n--changeset_1--",
    ].join("\r\n");
    expect(entityCount("/devstoreaccount1/$batch", body)).toBe(3);
    expect(entityCount("/devstoreaccount1/$batch", "")).toBe(1);
    expect(entityCount("/devstoreaccount1/t", body)).toBe(1);
    expect(entityCount("/devstoreaccount1/t(PartitionKey='a',RowKey='b')", undefined)).toBe(1);
  });
});
