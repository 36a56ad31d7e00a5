import { describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, AzureSASCredential, TableClient } from "@azure/data-tables";
import {
  createEmptyPipeline,
  createHttpHeaders,
  createPipelineRequest,
  RestError,
  type HttpClient,
  type Pipeline,
  type PipelinePolicy,
  type PipelineRequest,
  type PipelineResponse,
} from "@azure/core-rest-pipeline";
import { ambiguousWriteReadBackPolicy, fixedBackoff, getRetryInfo, installResilience } from "../../../src/index.js";
import { createReadBackRoutes } from "../../../src/ambiguousWrites/readBackRoutes.js";
import { resilientRetryPolicyName } from "../../../src/policies/resilientRetryPolicy.js";
import { ambiguousWriteReadBackPolicyName } from "../../../src/ambiguousWrites/ambiguousWriteReadBack.js";
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

describe("each install has its own read-back routes", () => {
  const table = "http://127.0.0.1:10002/devstoreaccount1/orders";
  const body = JSON.stringify({ PartitionKey: "p", RowKey: "r", n: 1 });
  const stored = JSON.stringify({ "odata.etag": 'W/"datetime\'1\'"', PartitionKey: "p", RowKey: "r", Timestamp: "2026-01-01T00:00:00Z", n: 1 });
  const reply = (request: PipelineRequest, status: number, text?: string): PipelineResponse => ({ request, status, headers: createHttpHeaders({}), bodyAsText: text });
  type Step = (req: PipelineRequest) => PipelineResponse | Error;

  function scripted(...steps: Step[]) {
    const sent: string[] = [];
    const client: HttpClient = {
      async sendRequest(req) {
        sent.push(req.method);
        const result = steps.shift()?.(req) ?? new Error(`unexpected ${req.method}`);
        if (result instanceof Error) throw result;
        return result;
      },
    };
    return { client, sent };
  }
  const insert = () => createPipelineRequest({ url: table, method: "POST", body, headers: createHttpHeaders({ prefer: "return-no-content" }) });
  const reset = () => new RestError("socket hang up", { code: "ECONNRESET" });
  const options = { service: "table", metrics: false, circuitBreaker: false, retry: fixedBackoff({ maxRetries: 3, delayInMs: 1 }) } as const;

  /** A pipeline of one install's read-back policy and another's retry policy (each install's own when they are the same). */
  function mixed(readBackFrom: Pipeline, retryPolicy: PipelinePolicy): Pipeline {
    const pipeline = createEmptyPipeline();
    const readBack = readBackFrom.getOrderedPolicies().find((p) => p.name === ambiguousWriteReadBackPolicyName);
    expect(readBack).toBeDefined();
    pipeline.addPolicy(readBack!, { phase: "Serialize" });
    pipeline.addPolicy(retryPolicy, { phase: "Retry" });
    return pipeline;
  }

  it("a retry policy reads back only along routes its own install's read-back policy remembered", async () => {
    const a = createEmptyPipeline();
    const b = createEmptyPipeline();
    const handleA = installResilience(a, options);
    const handleB = installResilience(b, options);
    try {
      const script = (): Step[] => [reset, (r) => reply(r, 409), (r) => reply(r, 200, stored)];
      // A's read-back policy remembered the write, in A's routes: B's retry policy finds no route there.
      const across = scripted(...script());
      const response = await mixed(a, handleB.retryPolicy).sendRequest(across.client, insert());
      expect(across.sent).toEqual(["POST", "POST"]);
      expect(getRetryInfo(response)).toMatchObject({ ambiguousWrite: "unresolved", possiblyApplied: true });

      // The same write through B's own pair is read back.
      const own = scripted(...script());
      const settled = await mixed(b, handleB.retryPolicy).sendRequest(own.client, insert());
      expect(own.sent).toEqual(["POST", "POST", "GET"]);
      expect(getRetryInfo(settled)).toMatchObject({ ambiguousWrite: "applied", possiblyApplied: false });
      expect(handleA.retryPolicy).not.toBe(handleB.retryPolicy);
    } finally {
      handleA.dispose();
      handleB.dispose();
    }
  });

  it("refuses ambiguousWrites.readBackRoutes: the install makes its own", () => {
    expect(() => installResilience(createEmptyPipeline(), { ...options, ambiguousWrites: { readBackRoutes: createReadBackRoutes() } } as never)).toThrow(
      /ambiguousWrites\.readBackRoutes is not an installResilience option/,
    );
  });

  it("refuses ambiguousWrites.readBackPolicy: the install adds its own read-back policy", () => {
    expect(() => installResilience(createEmptyPipeline(), { ...options, ambiguousWrites: { readBackPolicy: ambiguousWriteReadBackPolicy() } } as never)).toThrow(
      /ambiguousWrites\.readBackPolicy is not an installResilience option/,
    );
  });
});
