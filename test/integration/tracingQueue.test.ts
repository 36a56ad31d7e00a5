import { describe, expect, it } from "vitest";
import { QueueServiceClient, StorageSharedKeyCredential } from "@azure/storage-queue";
import { installResilience } from "../../src/index.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";
import { expectExplained, explainCall, formatTrace, stringsOf, useInMemoryTracing } from "../support/openTelemetryTracing.js";

// Issue 31 for Queue: a real QueueClient send, the Azure SDK's OpenTelemetry instrumentation,
// an in-memory exporter, Azurite and the simulator (a queue is one partition).

const env = withStorageSimulator("queue", { seed: 31 });
const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
const tracing = useInMemoryTracing();

describe("a Queue send's trace", () => {
  it("explains a send that backed off, waited on the open circuit of a moving partition, and succeeded", async () => {
    const queue = uniqueStorageName("trace");
    await new QueueServiceClient(env.directUrl, credential()).getQueueClient(queue).create();
    const client = new QueueServiceClient(env.proxyUrl, credential()).getQueueClient(queue);
    const handle = installResilience(client, {
      metrics: false,
      retry: { baseDelayInMs: 150, minDelayInMs: 100, maxDelayInMs: 400 },
      circuitBreaker: { consecutiveFailures: 2, resetTimeoutInMs: 1_000 },
    });
    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { resource: queue, method: "POST" }, durationInMs: 2_500 });
    tracing().exporter.reset();
    try {
      await client.sendMessage("order 42 shipped");
    } finally {
      handle.dispose();
    }
    const call = explainCall(tracing().spans(), "QueueClient-sendMessage");
    console.log(formatTrace(call));
    expectExplained(call, ["backoff", "circuit"]);
    expect(stringsOf(call).filter((s) => s.includes(queue))).toEqual([]);
  });
});
