import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseAccountAndPath } from "../../../src/address/parseAccountAndPath.js";

describe("parseAccountAndPath", () => {
  it("reads the account from a host-style URL", () => {
    expect(parseAccountAndPath("https://myacct.table.core.windows.net/orders()?$top=1")).toEqual({
      account: "myacct",
      pathSegments: ["orders()"],
      hostService: "table",
    });
  });

  it("reads the account from the first segment of an Azurite path-style URL, on any port", () => {
    for (const origin of ["http://127.0.0.1:10002", "http://127.0.0.1:54321", "http://localhost:10000", "http://[::1]:7", "http://azurite:10002"]) {
      expect(parseAccountAndPath(`${origin}/devstoreaccount1/orders`)).toEqual({
        account: "devstoreaccount1",
        pathSegments: ["orders"],
        hostService: undefined,
      });
    }
  });

  it("strips the RA-GRS -secondary suffix", () => {
    expect(parseAccountAndPath("https://myacct-secondary.blob.core.windows.net/c")?.account).toBe("myacct");
    expect(parseAccountAndPath("http://127.0.0.1:10000/devstoreaccount1-secondary/c")?.account).toBe("devstoreaccount1");
  });

  it("percent-decodes each segment, keeping an encoded slash inside its segment", () => {
    expect(parseAccountAndPath("https://a.blob.core.windows.net/c/dir%2Fx/%C3%A9t%C3%A9%20y")?.pathSegments).toEqual([
      "c",
      "dir/x",
      "été y",
    ]);
  });

  it("leaves malformed escapes as they are", () => {
    expect(parseAccountAndPath("https://a.blob.core.windows.net/c/50%25%zz")?.pathSegments).toEqual(["c", "50%25%zz"]);
  });

  it("gives the account root no segments", () => {
    expect(parseAccountAndPath("https://a.blob.core.windows.net/?comp=list")).toEqual({ account: "a", pathSegments: [], hostService: "blob" });
    expect(parseAccountAndPath("https://a.blob.core.windows.net")).toEqual({ account: "a", pathSegments: [], hostService: "blob" });
  });

  it("names the service a host names, and none for path-style or custom-domain hosts", () => {
    expect(parseAccountAndPath("https://a.z12.queue.storage.azure.net/q")?.hostService).toBe("queue");
    expect(parseAccountAndPath("http://a.table.localhost:10002/t")?.hostService).toBe("table");
    expect(parseAccountAndPath("http://127.0.0.1:10002/devstoreaccount1/t")?.hostService).toBeUndefined();
    expect(parseAccountAndPath("https://files.example.com/c")?.hostService).toBeUndefined();
  });

  it("uses the whole hostname of a custom domain as the account", () => {
    expect(parseAccountAndPath("https://files.example.com/c/b")).toEqual({ account: "files.example.com", pathSegments: ["c", "b"], hostService: undefined });
  });

  it.each(["", "nonsense", "ftp://127.0.0.1/acct/x", "http://127.0.0.1:10002/", "http://127.0.0.1:10002"])(
    "returns undefined for %j",
    (url) => {
      expect(parseAccountAndPath(url)).toBeUndefined();
    },
  );
});

// The parser splits plain paths by hand after the first look at an origin (a speed-up kept
// inside it): whatever the path holds, the answer is the one the WHATWG URL parser gives.

/** The answer read through `new URL`, as the function documents it. */
function throughUrlParser(url: string): { account: string; pathSegments: string[] } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const decode = (t: string): string => {
    try {
      return decodeURIComponent(t);
    } catch {
      return t;
    }
  };
  const segments = parsed.pathname === "/" || parsed.pathname === "" ? [] : parsed.pathname.slice(1).split("/").map(decode);
  const host = parsed.hostname;
  if (host === "127.0.0.1" || host === "localhost") {
    const first = segments[0];
    if (first === undefined || first === "") return undefined;
    return { account: first.endsWith("-secondary") ? first.slice(0, -10) : first, pathSegments: segments.slice(1) };
  }
  return { account: host.split(".")[0] as string, pathSegments: segments };
}

describe("parseAccountAndPath against the URL parser", () => {
  const origins = fc.constantFrom("http://127.0.0.1:10002", "http://localhost:10000", "https://acct.table.core.windows.net", "https://acct.blob.core.windows.net");
  const pieces = fc.oneof(
    fc.constantFrom("devstoreaccount1", "orders", "orders(PartitionKey='p1',RowKey='r1')", ".", "..", "%2e", "%2E%2e", "a b", "%zz", "%41", "%2F", "ä", "\\", "`", "{x}", "a|b", "\t", "", "Tables", "$batch", "-secondary"),
    fc.string({ maxLength: 4 }),
  );
  const tails = fc.constantFrom("", "?comp=list", "#frag", "?$filter=PartitionKey%20eq%20'x'", "?a=b#c");
  it("gives the parser's account and segments for any path, repeated origins included", () => {
    fc.assert(
      fc.property(origins, fc.array(pieces, { maxLength: 5 }), tails, (origin, segments, tail) => {
        const url = `${origin}/${segments.join("/")}${tail}`;
        // Twice: the first look at an origin goes through the parser, the second is split by hand.
        parseAccountAndPath(url);
        const got = parseAccountAndPath(url);
        const expected = throughUrlParser(url);
        expect(got === undefined ? undefined : { account: got.account, pathSegments: got.pathSegments }).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });
});
