import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAccountAndPath, parseAccountAndPathWithUrl } from "../../../src/partition/parseAccountAndPath.js";

/** Origins the fast path remembers (plain), next to ones it must leave to the URL parser. */
const origin = fc.constantFrom(
  "http://127.0.0.1:10002",
  "http://127.1:10002",
  "http://localhost:10000",
  "http://[::1]:7",
  "http://azurite:10002",
  "https://a.table.core.windows.net",
  "https://A.Blob.Core.Windows.Net",
  "https://a-secondary.queue.core.windows.net",
  "https://files.example.com",
  "https://files.example.com:443",
  "http://host.docker.internal:10002",
  "HTTP://127.0.0.1:10002",
  "http://user@127.0.0.1:10002",
  "http:/127.0.0.1:10002",
  "http://",
  "http://127.0.0.1:99999",
  "ftp://127.0.0.1",
);

/** Path and query pieces chosen to hit everything the URL parser rewrites, plus arbitrary text. */
const piece = fc.oneof(
  fc.constantFrom(
    "/", "/devstoreaccount1", "/devstoreaccount1-secondary", "/orders", "(PartitionKey='p1',RowKey='r1')", "/.", "/..", "/%2e", "/%2E%2e",
    ".", "..", "\\", "%", "%2", "%2F", "%C3%A9", "%zz", " ", "\t", "\n", "\u0000", "\u007f", "é", "\u{1F600}", "?", "#", "?$filter=x",
    '"', "<", ">", "^", "`", "{", "|", "}", "[", "]", "'", "''", "$batch", "Tables", "@", ":", ";", "=", ",", "&", "+", "~",
  ),
  fc.string({ unit: "binary-ascii", maxLength: 4 }),
  fc.string({ unit: "binary", maxLength: 3 }),
);

const storageUrl = fc.tuple(origin, fc.array(piece, { maxLength: 10 })).map(([o, parts]) => o + parts.join(""));

describe("parseAccountAndPath (property)", () => {
  it("answers exactly as the URL parser path does, with the origin cache warm or cold", () => {
    fc.assert(
      fc.property(storageUrl, (url) => {
        const viaParser = parseAccountAndPathWithUrl(url);
        // The call above remembered the origin when it could, so this one may take the fast path.
        expect(parseAccountAndPath(url)).toEqual(viaParser);
        expect(parseAccountAndPath(url)).toEqual(parseAccountAndPathWithUrl(url));
      }),
      { numRuns: 20_000 },
    );
  });

  it("answers exactly as the URL parser path does for arbitrary text after a remembered origin", () => {
    fc.assert(
      fc.property(origin, fc.string({ unit: "binary" }), (o, rest) => {
        parseAccountAndPathWithUrl(`${o}/x`);
        const url = o + rest;
        expect(parseAccountAndPath(url)).toEqual(parseAccountAndPathWithUrl(url));
      }),
      { numRuns: 10_000 },
    );
  });
});
