import { afterEach, describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, RestError, type HttpClient, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { getRetryInfo, installResilience, type AmbiguousWriteEvent, type RetryInfo } from "../../../src/index.js";
import { isPossiblyApplied } from "../../support/possiblyApplied.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";
import { captureAzureLog, type AzureLogCapture } from "../../support/captureAzureLog.js";

// Issue 30. createTable or deleteTable whose first attempt was reset after the store applied
// it: the retry gets 409 TableAlreadyExists or 404, which the SDK swallows (the table exists,
// or is gone, as asked). Not an ambiguous write to mark `unresolved`: logged at info.

const url = `http://127.0.0.1:10002/${DEVSTORE_ACCOUNT_NAME}`;
const reset = (): Error => new RestError("socket hang up", { code: "ECONNRESET" });

/** A Tables error answer as the service sends it: the code in the header and in the OData body. */
function tableError(request: PipelineRequest, status: number, code: string): PipelineResponse {
  return {
    request,
    status,
    headers: createHttpHeaders({ "x-ms-error-code": code, "content-type": "application/json;odata=minimalmetadata" }),
    bodyAsText: JSON.stringify({ "odata.error": { code, message: { lang: "en-US", value: code } } }),
  };
}

function clientAnswering(events: AmbiguousWriteEvent[], ...steps: Array<(req: PipelineRequest) => PipelineResponse | Error>) {
  const sent: string[] = [];
  const httpClient: HttpClient = {
    async sendRequest(req) {
      sent.push(req.method);
      const result = steps.shift()?.(req) ?? new Error(`unexpected ${req.method}`);
      if (result instanceof Error) throw result;
      return result;
    },
  };
  const client = new TableClient(url, "orders", new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY), { httpClient, allowInsecureConnection: true });
  installResilience(client, { metrics: false, circuitBreaker: false, retry: { strategy: "fixed", maxRetries: 3, delayInMs: 0 }, observers: [{ onAmbiguousWrite: (e) => events.push(e) }] });
  return { client, sent };
}

let log: AzureLogCapture | undefined;
afterEach(() => log?.stop());

describe("createTable and deleteTable retried after a reset", () => {
  it("createTable answered 409 TableAlreadyExists on the retry: the table exists as asked; no ambiguity, one info line", async () => {
    const events: AmbiguousWriteEvent[] = [];
    const { client, sent } = clientAnswering(events, reset, (r) => tableError(r, 409, "TableAlreadyExists"));
    log = captureAzureLog("info");
    let info: RetryInfo | undefined;
    await client.createTable({ onResponse: (raw) => (info = getRetryInfo(raw)) });
    expect(sent).toEqual(["POST", "POST"]);
    expect(events).toEqual([]);
    expect(info).toMatchObject({ attempts: 2, unknownOutcomes: 1, possiblyApplied: false });
    expect(info?.ambiguousWrite).toBeUndefined();
    expect(log.lines.filter((l) => l.includes("as asked"))).toEqual([
      expect.stringMatching(/^azure:storage-resilience:info create_table retried after an unknown outcome: the table exists, as asked\.$/),
    ]);
  });

  it("deleteTable answered 404 on the retry: the table is gone as asked; no ambiguity, one info line", async () => {
    const events: AmbiguousWriteEvent[] = [];
    const { client, sent } = clientAnswering(events, reset, (r) => tableError(r, 404, "ResourceNotFound"));
    log = captureAzureLog("info");
    await client.deleteTable();
    expect(sent).toEqual(["DELETE", "DELETE"]);
    expect(events).toEqual([]);
    expect(log.lines.filter((l) => l.includes("as asked"))).toEqual([expect.stringMatching(/delete_table retried after an unknown outcome: the table is gone, as asked\.$/)]);
  });

  it("createTable answered another 409 (TableBeingDeleted) on the retry: the SDK throws it, marked possibly applied as before", async () => {
    const events: AmbiguousWriteEvent[] = [];
    const { client } = clientAnswering(events, reset, (r) => tableError(r, 409, "TableBeingDeleted"));
    const error = await client.createTable().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ statusCode: 409 });
    expect(isPossiblyApplied(error)).toBe(true);
    expect(events).toMatchObject([{ operation: "other", result: "unresolved" }]);
  });

  it("createTable answered 409 TableAlreadyExists at the first attempt is no ambiguity either (nothing was unknown), and logs nothing of ours", async () => {
    const events: AmbiguousWriteEvent[] = [];
    const { client } = clientAnswering(events, (r) => tableError(r, 409, "TableAlreadyExists"));
    log = captureAzureLog("info");
    await client.createTable();
    expect(events).toEqual([]);
    expect(log.lines.filter((l) => l.includes("as asked"))).toEqual([]);
  });
});
