import { afterEach, describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { createHttpHeaders, type HttpClient, type PipelineRequest, type PipelineResponse } from "@azure/core-rest-pipeline";
import { getRetryInfo, installResilience, type ResilienceHandle } from "../../../src/index.js";

// handle.work: a bounded caller's unit of work counts as one of its slots for as long as it
// runs, the time spent outside the client included (docs/flow-control.md).

const credential = new AzureNamedKeyCredential("devstoreaccount1", Buffer.from("key").toString("base64"));
let handles: ResilienceHandle[] = [];
afterEach(() => {
  for (const h of handles) h.dispose();
  handles = [];
});

/** Answers 503 ServerBusy to the first request, then 200 with an entity. */
function busyOnce(): HttpClient {
  let sent = 0;
  return {
    sendRequest: async (request: PipelineRequest) => {
      sent += 1;
      if (sent === 1) return { request, status: 503, headers: createHttpHeaders({ "x-ms-error-code": "ServerBusy" }) };
      return { request, status: 200, headers: createHttpHeaders({ "content-type": "application/json" }), bodyAsText: '{"PartitionKey":"p1","RowKey":"r1"}' };
    },
  };
}

function install(): { client: TableClient; handle: ResilienceHandle } {
  const client = new TableClient("https://acct.table.core.windows.net", "orders", credential, { httpClient: busyOnce() });
  const handle = installResilience(client, { caller: { concurrency: 2 }, retry: { strategy: "fixed", maxRetries: 3, delayInMs: 100 }, metrics: false });
  handles.push(handle);
  return { client, handle };
}

describe("handle.work", () => {
  it("with a free slot, an operation inside a unit of work sleeps its backoff and succeeds", async () => {
    const { client, handle } = install();
    let raw: PipelineResponse | undefined;
    await handle.work(() => client.getEntity("p1", "r1", { onResponse: (response) => (raw = response) }));
    expect(getRetryInfo(raw)).toMatchObject({ attempts: 2, stopReason: "success" });
  });

  it("with the other slot busy in a unit of work outside the client, the backoff finds no spare slot: caller-busy at once", async () => {
    const { client, handle } = install();
    let finish: () => void = () => undefined;
    const elsewhere = handle.work(() => new Promise<void>((resolve) => (finish = resolve)));
    const error = await handle.work(() => client.getEntity("p1", "r1")).catch((e: unknown) => e);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, stopReason: "caller-busy" });
    finish();
    await elsewhere;
  });

  it("answers what the unit answers, and names a unit that is not a function", async () => {
    const { handle } = install();
    await expect(handle.work(async () => 42)).resolves.toBe(42);
    await expect(handle.work(async () => Promise.reject(new Error("its own")))).rejects.toThrow("its own");
    expect(() => handle.work(null as never)).toThrow(/^work: unit must be a function/);
  });
});
