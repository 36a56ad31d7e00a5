import { describe, expect, it } from "vitest";
import { parseAccountAndPath } from "../../../src/partition/parseAccountAndPath.js";

describe("parseAccountAndPath", () => {
  it("reads the account from a host-style URL", () => {
    expect(parseAccountAndPath("https://myacct.table.core.windows.net/orders()?$top=1")).toEqual({
      account: "myacct",
      pathSegments: ["orders()"],
    });
  });

  it("reads the account from the first segment of an Azurite path-style URL, on any port", () => {
    for (const origin of ["http://127.0.0.1:10002", "http://127.0.0.1:54321", "http://localhost:10000", "http://[::1]:7", "http://azurite:10002"]) {
      expect(parseAccountAndPath(`${origin}/devstoreaccount1/orders`)).toEqual({
        account: "devstoreaccount1",
        pathSegments: ["orders"],
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
    expect(parseAccountAndPath("https://a.blob.core.windows.net/?comp=list")).toEqual({ account: "a", pathSegments: [] });
    expect(parseAccountAndPath("https://a.blob.core.windows.net")).toEqual({ account: "a", pathSegments: [] });
  });

  it("uses the whole hostname of a custom domain as the account", () => {
    expect(parseAccountAndPath("https://files.example.com/c/b")).toEqual({ account: "files.example.com", pathSegments: ["c", "b"] });
  });

  it.each(["", "nonsense", "ftp://127.0.0.1/acct/x", "http://127.0.0.1:10002/", "http://127.0.0.1:10002"])(
    "returns undefined for %j",
    (url) => {
      expect(parseAccountAndPath(url)).toBeUndefined();
    },
  );
});
