import { describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, AzureSASCredential, TableClient } from "@azure/data-tables";
import { ambiguousWriteReadBackPolicyName, installResilience, resilientRetryPolicyName } from "../../../src/index.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";

const url = `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}`;
const names = (client: TableClient) => client.pipeline.getOrderedPolicies().map((p) => p.name);

describe("installResilience and the read-back policy", () => {
  const options = { allowInsecureConnection: true };
  it.each([
    ["shared key", () => new TableClient(url, "t", new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY), options), "tablesNamedKeyCredentialPolicy"],
    ["SAS", () => new TableClient(url, "t", new AzureSASCredential("sv=2020-01-01&sig=c2lnbmF0dXJl"), options), "tablesSASTokenPolicy"],
  ] as const)("with a %s credential it sits before the credential policy, which sits before the retry policy", (_name, create, signer) => {
    const client = create();
    const handle = installResilience(client, { metrics: false });
    const order = names(client);
    expect(order.indexOf(ambiguousWriteReadBackPolicyName)).toBeGreaterThanOrEqual(0);
    expect(order.indexOf(ambiguousWriteReadBackPolicyName)).toBeLessThan(order.indexOf(signer));
    expect(order.indexOf(signer)).toBeLessThan(order.indexOf(resilientRetryPolicyName));
    handle.dispose();
    expect(names(client)).not.toContain(ambiguousWriteReadBackPolicyName);
  });

  it("is not added with ambiguousWrites: false, and a reinstall does not add it twice", () => {
    const client = new TableClient(url, "t", new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY));
    installResilience(client, { metrics: false, ambiguousWrites: false });
    expect(names(client)).not.toContain(ambiguousWriteReadBackPolicyName);
    installResilience(client, { metrics: false });
    installResilience(client, { metrics: false });
    expect(names(client).filter((n) => n === ambiguousWriteReadBackPolicyName)).toHaveLength(1);
  });
});
