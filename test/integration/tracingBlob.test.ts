import { describe, expect, it } from "vitest";
import { BlobServiceClient, BlockBlobClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { installResilience } from "../../src/index.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";
import { expectExplained, explainCall, formatTrace, stringsOf, useInMemoryTracing } from "../support/openTelemetryTracing.js";

// Issue 31 for Blob: a real BlockBlobClient upload, the Azure SDK's OpenTelemetry
// instrumentation, an in-memory exporter, Azurite and the simulator (a blob is its own partition).

const env = withStorageSimulator("blob", { seed: 31 });
const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
const tracing = useInMemoryTracing();

describe("a Blob upload's trace", () => {
  it("explains an upload that backed off, waited on the open circuit of a moving partition, and succeeded", async () => {
    const container = uniqueStorageName("trace");
    await new BlobServiceClient(env.directUrl, credential()).getContainerClient(container).create();
    const client = new BlockBlobClient(`${env.proxyUrl}/${container}/moving.txt`, credential());
    const handle = installResilience(client, {
      metrics: false,
      retry: { baseDelayInMs: 150, minDelayInMs: 100, maxDelayInMs: 400 },
      circuitBreaker: { consecutiveFailures: 2, resetTimeoutInMs: 1_000 },
    });
    env.simulator.addFault({ name: "moving", kind: "serverBusy", match: { partition: "moving.txt" }, durationInMs: 2_500 });
    tracing().exporter.reset();
    try {
      await client.upload("hello, rebalanced world", 23);
    } finally {
      handle.dispose();
    }
    const call = explainCall(tracing().spans(), "BlockBlobClient-upload");
    console.log(formatTrace(call));
    expectExplained(call, ["backoff", "circuit"]);
    expect(stringsOf(call).filter((s) => s.includes("moving") || s.includes(container))).toEqual([]);
  });
});
