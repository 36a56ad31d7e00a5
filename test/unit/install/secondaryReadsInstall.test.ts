import { describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest } from "@azure/core-rest-pipeline";
import { Registry } from "prom-client";
import { installResilience } from "../../../src/index.js";
import { sumOf } from "../metrics/metricsTestKit.js";

// The well-known, public Azurite development key: not a secret.
const credential = new AzureNamedKeyCredential(
  "myaccount",
  "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
);

const table = (endpoint: string, httpClient?: HttpClient) => new TableClient(endpoint, "orders", credential, { httpClient });

describe("installResilience({ secondaryReads })", () => {
  it("refuses null and other non-options, naming the option", () => {
    expect(() => installResilience(table("https://myaccount.table.core.windows.net"), { secondaryReads: null as never })).toThrow(
      /secondaryReads must be a boolean or an options object.*got null/,
    );
    expect(() => installResilience(table("https://myaccount.table.core.windows.net"), { secondaryReads: { endpoint: "ftp://x" } })).toThrow(TypeError);
  });

  it("refuses true where no -secondary endpoint derives, and takes an endpoint there", () => {
    for (const endpoint of ["https://tables.example.com", "https://myaccount.table.cosmos.azure.com", "https://myaccount-secondary.table.core.windows.net"]) {
      expect(() => installResilience(table(endpoint), { secondaryReads: true, metrics: false }), endpoint).toThrow(/no -secondary twin.*secondaryReads: \{ endpoint \}/);
    }
    const handle = installResilience(table("https://tables.example.com"), { secondaryReads: { endpoint: "https://reads.example.com" }, metrics: false });
    handle.dispose();
  });

  it("sends a Tables read the primary answers 503 to the secondary host with the primary's signature, and counts it", async () => {
    const requests: Array<{ url: string; authorization: string | undefined }> = [];
    const httpClient: HttpClient = {
      async sendRequest(request: PipelineRequest) {
        requests.push({ url: request.url, authorization: request.headers.get("authorization") });
        const secondary = new URL(request.url).hostname.startsWith("myaccount-secondary.");
        const headers = createHttpHeaders({ "content-type": "application/json", ...(secondary ? {} : { "x-ms-error-code": "ServerBusy" }) });
        const body = secondary ? { PartitionKey: "p", RowKey: "r", value: "stale or not" } : { "odata.error": { code: "ServerBusy", message: { value: "busy" } } };
        return { request, status: secondary ? 200 : 503, headers, bodyAsText: JSON.stringify(body) };
      },
    };
    const client = table("https://myaccount.table.core.windows.net", httpClient);
    const registry = new Registry();
    const handle = installResilience(client, { secondaryReads: true, metrics: { registry } });
    try {
      const entity = await client.getEntity<{ value: string }>("p", "r");
      expect(entity.value).toBe("stale or not");
      expect(requests.map((r) => new URL(r.url).hostname)).toEqual(["myaccount.table.core.windows.net", "myaccount-secondary.table.core.windows.net"]);
      // Signed once, before the Retry phase, for /myaccount/orders(...): the path is unchanged, so that signature holds on the secondary.
      expect(requests[1]?.authorization).toBe(requests[0]?.authorization);
      expect(new URL(requests[1]?.url ?? "").pathname).toBe(new URL(requests[0]?.url ?? "").pathname);
      expect(await sumOf(registry, "azure_storage_secondary_reads_total", { service: "table", outcome: "success" })).toBe(1);
    } finally {
      handle.dispose();
    }
  });
});
