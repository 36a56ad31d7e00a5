import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { plainPathEnd, undecodedPathEnd } from "../../../src/partition/plainPath.js";

const ORIGIN = "http://127.0.0.1:10002";

/** Path pieces that hit everything the URL parser rewrites or encodes, plus arbitrary text. */
const piece = fc.oneof(
  fc.constantFrom(
    "/", "/devstoreaccount1", "/orders", "(PartitionKey='p1',RowKey='r1')", "/.", "/..", "/%2e", "/%2E%2e", ".", "..", "\\", "%",
    "%2", "%2F", "%C3%A9", "%zz", " ", "\t", "\n", "\r", "\u0000", "\u007f", "é", "?", "#", "?$filter=x", '"', "<", ">", "^", "`",
    "{", "|", "}", "[", "]", "'", "$batch", "@", ":", ";", "=", ",", "&", "+", "~", "!", "*",
  ),
  fc.string({ unit: "binary-ascii", maxLength: 4 }),
  fc.string({ unit: "binary", maxLength: 2 }),
);
const path = fc.array(piece, { maxLength: 10 }).map((parts) => `/${parts.join("")}`);

describe("plainPathEnd / undecodedPathEnd (property)", () => {
  it("a path they accept is the URL parser's pathname as written, ending at the first ? or #", () => {
    fc.assert(
      fc.property(path, (p) => {
        const url = ORIGIN + p;
        const from = ORIGIN.length;
        const end = plainPathEnd(url, from);
        const undecodedEnd = undecodedPathEnd(url, from);
        if (undecodedEnd !== -1) {
          expect(undecodedEnd).toBe(end);
          expect(url.slice(from, undecodedEnd)).not.toContain("%");
        }
        if (end === -1) return;
        const stop = url.slice(from).search(/[?#]/);
        expect(end).toBe(stop === -1 ? url.length : from + stop);
        expect(new URL(url).pathname).toBe(url.slice(from, end));
      }),
      { numRuns: 3000 },
    );
  });

  it("accept the plain paths storage clients send", () => {
    const entity = `${ORIGIN}/devstoreaccount1/orders(PartitionKey='p1',RowKey='r1')?$select=a`;
    expect(plainPathEnd(entity, ORIGIN.length)).toBe(entity.indexOf("?"));
    expect(undecodedPathEnd(entity, ORIGIN.length)).toBe(entity.indexOf("?"));
    const encoded = `${ORIGIN}/devstoreaccount1/photos/a%20b.jpg`;
    expect(plainPathEnd(encoded, ORIGIN.length)).toBe(encoded.length);
    expect(undecodedPathEnd(encoded, ORIGIN.length)).toBe(-1);
    for (const rewritten of ["/a/./b", "/a/%2e%2E/b", "/a\\b", "/a b", "/a|b", "/é"]) {
      expect(plainPathEnd(ORIGIN + rewritten, ORIGIN.length), rewritten).toBe(-1);
    }
  });
});
