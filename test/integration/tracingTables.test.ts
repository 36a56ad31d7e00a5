import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installResilience } from "../../src/index.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";
import { eventsOf, childrenOf, inMemoryTracing, type InMemoryTracing } from "../support/openTelemetryTracing.js";

const env = withTableSimulator({ seed: 31 });
let tracing: InMemoryTracing;
beforeAll(() => {
  tracing = inMemoryTracing();
});
afterAll(async () => {
  await tracing.shutdown();
});

describe("tracing a TableClient call", () => {
  it("explore", async () => {
    const table = uniqueTableName("trace");
    await env.directTableClient(table).createTable();
    const client = env.tableClient(table);
    const handle = installResilience(client, { metrics: false, circuitBreaker: { consecutiveFailures: 2, resetTimeoutInMs: 1_000 } });
    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { partition: "moving" }, durationInMs: 2_500 });
    await client.upsertEntity({ partitionKey: "moving", rowKey: "r1", n: 1 });
    handle.dispose();
    const spans = tracing.spans();
    for (const s of spans) console.log(s.name, s.parentSpanContext?.spanId, s.spanContext().spanId, JSON.stringify(s.attributes), (s.duration[0]*1000+s.duration[1]/1e6).toFixed(1));
    const method = spans.find((s) => s.name === "TableClient.upsertEntity")!;
    console.log(JSON.stringify(eventsOf(method), null, 1));
    console.log(childrenOf(spans, method).length);
    expect(method).toBeDefined();
  });
});
