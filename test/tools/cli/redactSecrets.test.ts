import { describe, expect, it } from "vitest";
import { DEVSTORE_ACCOUNT_KEY } from "azure-storage-resilience/testing";
import { redactSecrets } from "../../../tools/cli/redactSecrets.js";

describe("redactSecrets", () => {
  it.each([
    ["DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc+/=123;EndpointSuffix=x", "abc+/=123"],
    ["TableEndpoint=https://a.table.core.windows.net;SharedAccessSignature=sv=2024&sig=XYZ", "sig=XYZ"],
    ["GET https://a.table.core.windows.net/t?sv=2024-01-01&se=2030&sig=abcdef%3D HTTP/1.1", "abcdef%3D"],
    ["Authorization: SharedKey devstoreaccount1:c2lnbmF0dXJl", "c2lnbmF0dXJl"],
    [`the key ${DEVSTORE_ACCOUNT_KEY} leaked`, DEVSTORE_ACCOUNT_KEY],
  ])("removes the secret from %j", (text, secret) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain("<redacted>");
  });

  it("removes extra secrets given by the caller, and leaves ordinary text alone", () => {
    expect(redactSecrets("connect with hunter2hunter2 now", ["hunter2hunter2"])).toBe("connect with <redacted> now");
    expect(redactSecrets("Nothing accepts connections at 127.0.0.1:1 (ECONNREFUSED).")).toBe("Nothing accepts connections at 127.0.0.1:1 (ECONNREFUSED).");
  });
});
