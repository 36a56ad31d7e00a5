import { describe, expect, it } from "vitest";
import { redactPath } from "../../../../src/testing/simulator/redactPath.js";

describe("redactPath", () => {
  it("removes the signature and the other SAS parameters, keeping the operation's own", () => {
    expect(redactPath("/acct/c/b?comp=block&blockid=AA%3D%3D&sv=2023-01-03&se=2030-01-01&sp=rw&sig=abc%2Bdef%3D")).toBe(
      "/acct/c/b?comp=block&blockid=AA%3D%3D",
    );
    expect(redactPath("/acct/t()?$filter=x&tn=t&spk=a&sig=s")).toBe("/acct/t()?$filter=x");
  });

  it("matches parameter names case-insensitively and percent-decoded", () => {
    expect(redactPath("/a?SIG=x&%73ig=y&keep=1")).toBe("/a?keep=1");
  });

  it("drops an emptied query string and leaves paths without one alone", () => {
    expect(redactPath("/a/b?sig=x")).toBe("/a/b");
    expect(redactPath("/a/b")).toBe("/a/b");
    expect(redactPath("/a?%zz=1&sig=2")).toBe("/a?%zz=1");
  });
});
