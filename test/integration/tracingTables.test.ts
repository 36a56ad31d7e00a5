import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import type { TableClient } from "@azure/data-tables";
import { getRetryInfo, installResilience, isCircuitOpenError, type ResilienceHandle } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";
import { eventsOf, expectExplained, explainCall, formatTrace, stringsOf, traceSvg, useInMemoryTracing } from "../support/openTelemetryTracing.js";

// Issue 31 end to end: a real TableClient, the Azure SDK's OpenTelemetry instrumentation, an
// in-memory span exporter, Azurite and the rebalancing simulator. The call's own span explains
// where its time went.

const env = withTableSimulator({ seed: 31 });
/** Short backoffs, so that a backoff ends while the partition is still away and the call then waits on its open circuit. */
const RETRY = { baseDelayInMs: 150, minDelayInMs: 100, maxDelayInMs: 400 };
/** Opens after two failures in a row; a probe a second later. */
const BREAKER = { consecutiveFailures: 2, resetTimeoutInMs: 1_000 };
const MOVING_FOR_IN_MS = 2_500;

const tracing = useInMemoryTracing();
let table: string;
let client: TableClient;
let handle: ResilienceHandle | undefined;

beforeEach(async () => {
  handle?.dispose();
  env.simulator.clearFaults();
  table = uniqueTableName("trace");
  await env.directTableClient(table).createTable();
  client = env.tableClient(table);
  tracing().exporter.reset();
});

describe("a TableClient call's trace", () => {
  it("explains a call that backed off, waited on the open circuit of a moving partition, and succeeded", async () => {
    handle = installResilience(client, { metrics: false, retry: RETRY, circuitBreaker: BREAKER });
    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { partition: "moving" }, durationInMs: MOVING_FOR_IN_MS });
    await client.upsertEntity({ partitionKey: "moving", rowKey: "order-42", total: 99.5 });

    const call = explainCall(tracing().spans(), "TableClient.upsertEntity");
    const text = formatTrace(call);
    console.log(text);
    expectExplained(call, ["backoff", "circuit"]);
    // The waits on the circuit saw it open (or half-open while another probe was out).
    const circuitWaits = call.events.filter((e) => e.attributes["azure.storage.wait.reason"] === "circuit");
    expect(circuitWaits.every((e) => ["open", "half_open"].includes(String(e.attributes["azure.storage.partition.state"])))).toBe(true);
    // No partition key, table name or account in what the trace carries unless asked.
    expect(stringsOf(call).filter((s) => s.includes("moving") || s.includes(table))).toEqual([]);
    await writeDocs("table", text, traceSvg(call));
  });

  it("names the partition only when asked (partitionAttribute)", async () => {
    handle = installResilience(client, { metrics: false, retry: RETRY, tracing: { partitionAttribute: true } });
    env.simulator.addFault({ name: "once", kind: "serverBusy", match: { partition: "p-secret" }, count: 1 });
    await client.upsertEntity({ partitionKey: "p-secret", rowKey: "r1" });
    const call = explainCall(tracing().spans(), "TableClient.upsertEntity");
    expect(call.method.attributes["azure.storage.partition"]).toBe(`table|devstoreaccount1|${table}|p-secret`);
    expectExplained(call, ["backoff"]);
  });

  it("records a local refusal: the stop reason and when to come back", async () => {
    handle = installResilience(client, { metrics: false, retry: RETRY, circuitBreaker: { ...BREAKER, resetTimeoutInMs: 5_000 }, caller: { failFast: true } });
    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { partition: "gone" }, durationInMs: 10_000 });
    // Calls fail at the partition until its circuit opens (two failures in a row, a quarter second apart at least); the next is refused without sending.
    for (let i = 0; i < 20 && handle.partitionStatus(table, "gone").state !== "open"; i++) {
      await client.upsertEntity({ partitionKey: "gone", rowKey: `r${i}` }).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(handle.partitionStatus(table, "gone").state).toBe("open");
    tracing().exporter.reset();
    const error = await client.upsertEntity({ partitionKey: "gone", rowKey: "refused" }).catch((e: unknown) => e);
    expect(isCircuitOpenError(error)).toBe(true);
    const call = explainCall(tracing().spans(), "TableClient.upsertEntity");
    expect(call.attempts).toHaveLength(0);
    const refused = call.events.filter((e) => e.name === "azure.storage.refused");
    expect(refused).toHaveLength(1);
    expect(refused[0]?.attributes).toMatchObject({ "azure.storage.stop_reason": "circuit-open", "azure.storage.wait.reason": "circuit" });
    expect(refused[0]?.attributes["azure.storage.retry_after_ms"]).toBe(Math.round(getRetryInfo(error)!.retryAfterInMs! * 10) / 10);
    expect(call.method.attributes).toMatchObject({ "azure.storage.attempts": 0, "azure.storage.stop_reason": "circuit-open" });
  });

  it("records how an ambiguous write was settled, with the read-back's HTTP span under the call", async () => {
    handle = installResilience(client, { metrics: false, retry: RETRY });
    // The insert reaches the store, its answer is lost; the retry meets the entity (409), which is read back.
    env.simulator.addFault({ name: "lost", kind: "resetAfterForward", match: { partition: "amb", method: "POST" }, count: 1 });
    await client.createEntity({ partitionKey: "amb", rowKey: "r1", v: 1 });
    const call = explainCall(tracing().spans(), "TableClient.createEntity");
    const settled = call.events.filter((e) => e.name === "azure.storage.ambiguous_write");
    expect(settled.map((e) => e.attributes)).toEqual([{ "azure.storage.ambiguous_write.result": "applied", "azure.storage.ambiguous_write.unknown_outcomes": 1 }]);
    expect(call.events.filter((e) => e.name === "azure.storage.attempt").map((e) => e.attributes["azure.storage.attempt.class"])).toEqual(["transient", "permanent"]);
    // Two attempts (POST) and the read-back (GET), all children of the call's span.
    expect(call.attempts.map((s) => s.name)).toEqual(["HTTP POST", "HTTP POST", "HTTP GET"]);
  });

  it("writes nothing on a call that succeeds at its first attempt", async () => {
    handle = installResilience(client, { metrics: false });
    await client.upsertEntity({ partitionKey: "calm", rowKey: "r1" });
    const call = explainCall(tracing().spans(), "TableClient.upsertEntity");
    expect(call.attempts).toHaveLength(1);
    expect(eventsOf(call.method)).toEqual([]);
    expect(Object.keys(call.method.attributes).filter((k) => k.startsWith("azure.storage."))).toEqual([]);
  });
});

/** With TRACE_DOCS_DIR set, the trace's text and picture go there (docs/tracing.md shows them). */
async function writeDocs(name: string, text: string, svg: string): Promise<void> {
  const dir = process.env.TRACE_DOCS_DIR;
  if (dir === undefined) return;
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, `trace-${name}.txt`), `${text}\n`);
  await writeFile(join(dir, `trace-${name}.svg`), svg);
}
