import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { beforeEach, describe, expect, it } from "vitest";
import { BlobServiceClient, BlockBlobClient, ContainerClient, StorageSharedKeyCredential, type BlobClient } from "@azure/storage-blob";
import { getRetryInfo, installResilience, type AttemptEvent, type OperationEvent, type RetryObserver } from "../../src/index.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";

// The real @azure/storage-blob clients against Azurite's Blob service, through the
// rebalancing simulator; attempts are counted at the simulator and compared with the
// policy's own count, so a retry nested under ours would show as extra requests.

const env = withStorageSimulator("blob", { seed: 11 });
let container: string;

const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
// The SDK's own retry left on (fast), so that if installResilience did not remove it, it would add requests.
const sdkRetry = { retryOptions: { maxTries: 4, retryDelayInMs: 5, maxRetryDelayInMs: 5 } };
const proxyService = () => new BlobServiceClient(env.proxyUrl, credential(), sdkRetry);
const directContainer = () => new BlobServiceClient(env.directUrl, credential()).getContainerClient(container);
const fast = { strategy: "fixed", maxRetries: 20, delayInMs: 60 } as const;

/** Records what the policy saw: network attempts and each operation's end. */
function recorder(): RetryObserver & { attempts: AttemptEvent[]; ends: OperationEvent[] } {
  const attempts: AttemptEvent[] = [];
  const ends: OperationEvent[] = [];
  return { attempts, ends, onAttempt: (e) => attempts.push(e), onOperationEnd: (e) => ends.push(e) };
}

/** Attempts that went to the network (an open circuit's refusals never reach the simulator). */
const networkAttempts = (seen: { attempts: AttemptEvent[] }): number => seen.attempts.filter((a) => a.attemptClass !== "circuit_open").length;

async function text(client: BlobClient): Promise<string> {
  const response = await client.download();
  const chunks: Buffer[] = [];
  for await (const chunk of response.readableStreamBody as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

beforeEach(async () => {
  env.simulator.clearFaults();
  container = uniqueStorageName("blob");
  await directContainer().create();
  env.simulator.resetRecords();
});

describe("Blob upload and download ride out rebalancing", () => {
  it("upload (a buffer) through a BlobServiceClient: a ServerBusy window, then a reset before the request reached storage", async () => {
    const seen = recorder();
    const service = proxyService();
    installResilience(service, { retry: fast, observers: [seen] });
    // Installed on the service client; the derived BlockBlobClient shares its pipeline.
    const derived = service.getContainerClient(container).getBlockBlobClient("hot.txt");
    env.simulator.addFault({ name: "busy", kind: "serverBusy", match: { partition: "hot.txt", method: "PUT" }, durationInMs: 250 });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "hot.txt", method: "PUT" }, count: 1 });

    await derived.upload(Buffer.from("hello, rebalanced world"), 23);

    const busy = env.simulator.count({ partition: "hot.txt", fault: "serverBusy" });
    expect(busy).toBeGreaterThanOrEqual(2);
    expect(env.simulator.count({ partition: "hot.txt", fault: "resetBeforeForward" })).toBe(1);
    expect(env.simulator.count({ partition: "hot.txt", forwarded: true })).toBe(1);
    // Every request the simulator saw was one of our attempts: nothing retried underneath.
    expect(env.simulator.count({ partition: "hot.txt" })).toBe(busy + 2);
    expect(networkAttempts(seen)).toBe(busy + 2);
    expect(seen.ends.at(-1)?.stopReason).toBe("success");
    expect(await text(directContainer().getBlobClient("hot.txt"))).toBe("hello, rebalanced world");
  });

  it("download through a ContainerClient: a ServerBusy window, then a reset after storage answered", async () => {
    await directContainer().getBlockBlobClient("cold.txt").upload("stored before the outage", 24);
    const client = new ContainerClient(`${env.proxyUrl}/${container}`, credential(), sdkRetry);
    const seen = recorder();
    installResilience(client, { retry: fast, observers: [seen] });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "cold.txt", method: "GET" }, durationInMs: 250 });
    env.simulator.addFault({ kind: "resetAfterForward", match: { partition: "cold.txt", method: "GET" }, count: 1 });

    expect(await text(client.getBlobClient("cold.txt"))).toBe("stored before the outage");

    const busy = env.simulator.count({ partition: "cold.txt", fault: "serverBusy" });
    expect(busy).toBeGreaterThanOrEqual(2);
    expect(env.simulator.count({ partition: "cold.txt", fault: "resetAfterForward" })).toBe(1);
    expect(env.simulator.count({ partition: "cold.txt" })).toBe(busy + 2);
    expect(networkAttempts(seen)).toBe(busy + 2);
    expect(seen.ends.at(-1)?.stopReason).toBe("success");
  });

  it("a BlockBlobClient built on its own, with the blob preset (no options): a 2 s ServerBusy window", async () => {
    const client = new BlockBlobClient(`${env.proxyUrl}/${container}/preset.txt`, credential(), sdkRetry);
    const seen = recorder();
    installResilience(client, { observers: [seen] });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "preset.txt" }, durationInMs: 2000 });
    await client.upload("preset", 6);
    const attempts = env.simulator.count({ partition: "preset.txt" });
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(env.simulator.count({ partition: "preset.txt", forwarded: true })).toBe(1);
    expect(networkAttempts(seen)).toBe(attempts);
    expect(seen.ends.at(-1)?.stopReason).toBe("success");
  }, 30_000);

  it("uploadFile is retried: the SDK passes a stream factory, a fresh file stream per attempt", async () => {
    const file = join(await mkdtemp(join(tmpdir(), "asr-blob-")), "upload.txt");
    await writeFile(file, "from a file");
    try {
      const client = new BlockBlobClient(`${env.proxyUrl}/${container}/file.txt`, credential(), sdkRetry);
      installResilience(client, { retry: fast });
      env.simulator.addFault({ kind: "serverBusy", match: { partition: "file.txt", method: "PUT" }, count: 1 });
      env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "file.txt", method: "PUT" }, count: 1 });
      await client.uploadFile(file);
      expect(env.simulator.count({ partition: "file.txt", method: "PUT" })).toBe(3);
      expect(await text(directContainer().getBlobClient("file.txt"))).toBe("from a file");
    } finally {
      await rm(dirname(file), { recursive: true, force: true });
    }
  });

  it("uploadStream retries block by block: each staged block is a buffer", async () => {
    const client = new BlockBlobClient(`${env.proxyUrl}/${container}/streamed.txt`, credential(), sdkRetry);
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "streamed.txt", method: "PUT" }, count: 2 });
    const source = Readable.from([Buffer.from("part one, "), Buffer.from("part two")]);
    await client.uploadStream(source, 8, 1);
    expect(env.simulator.count({ partition: "streamed.txt", fault: "serverBusy" })).toBe(2);
    expect(await text(directContainer().getBlobClient("streamed.txt"))).toBe("part one, part two");
  });
});

describe("Blob bodies that cannot be sent twice", () => {
  it("upload with a stream object: one attempt, the 503 surfaces, and getRetryInfo says why", async () => {
    const client = new BlockBlobClient(`${env.proxyUrl}/${container}/once.txt`, credential(), sdkRetry);
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "once.txt" }, count: 1 });
    const error = await client.upload(Readable.from([Buffer.from("abcd")]), 4).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RestError", statusCode: 503 });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, classes: ["throttled"], stopReason: "body-not-replayable" });
    expect(env.simulator.count({ partition: "once.txt" })).toBe(1);
  });

  it("upload with a stream factory: retried, a fresh stream each attempt", async () => {
    const client = new BlockBlobClient(`${env.proxyUrl}/${container}/factory.txt`, credential(), sdkRetry);
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "factory.txt" }, count: 1 });
    let streams = 0;
    await client.upload(() => {
      streams++;
      return Readable.from([Buffer.from("abcd")]);
    }, 4);
    expect(streams).toBe(2);
    expect(env.simulator.count({ partition: "factory.txt" })).toBe(2);
    expect(await text(directContainer().getBlobClient("factory.txt"))).toBe("abcd");
  });
});

describe("no nested retry on Blob clients", () => {
  it("with retries off, one 503 is one request at the wire", async () => {
    const client = proxyService().getContainerClient(container).getBlockBlobClient("one.txt");
    installResilience(client, { retry: { strategy: "none" } });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "one.txt" } });
    await expect(client.upload("x", 1)).rejects.toMatchObject({ statusCode: 503, code: "ServerBusy" });
    expect(env.simulator.count({ partition: "one.txt" })).toBe(1);
  });

  it("(control) without it, the SDK's storageRetryPolicy sends the 503 four times", async () => {
    const client = proxyService().getContainerClient(container).getBlockBlobClient("one.txt");
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "one.txt" } });
    await expect(client.upload("x", 1)).rejects.toMatchObject({ statusCode: 503 });
    expect(env.simulator.count({ partition: "one.txt" })).toBe(4);
  });

  it("Azurite's own error codes reach the classifier through x-ms-error-code", async () => {
    const client = new ContainerClient(`${env.proxyUrl}/${container}`, credential());
    const seen = recorder();
    installResilience(client, { retry: fast, observers: [seen] });
    await expect(client.getBlobClient("missing.txt").download()).rejects.toMatchObject({ statusCode: 404 });
    await expect(client.create()).rejects.toMatchObject({ statusCode: 409 });
    expect(seen.attempts.map((a) => [a.status, a.errorCode, a.attemptClass])).toEqual([
      [404, "BlobNotFound", "permanent"],
      [409, "ContainerAlreadyExists", "permanent"],
    ]);
  });
});

describe("getRetryInfo on successful Blob results", () => {
  // `_response` is a copy whose request is a copy too, so the mark on the request is lost:
  // the retry loop marks the response it returns as well (attachRetryInfo in finish()).
  it("reads result._response and the result itself, after retries and at first try", async () => {
    const client = new ContainerClient(`${env.proxyUrl}/${container}`, credential());
    installResilience(client, { retry: fast });
    const blob = client.getBlockBlobClient("info.txt");
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "info.txt", method: "PUT" }, count: 2 });
    const uploaded = await blob.upload("retried twice", 13);
    const expected = { attempts: 3, classes: ["throttled", "throttled", "success"], stopReason: "success", possiblyApplied: false };
    expect(getRetryInfo(uploaded._response)).toMatchObject(expected);
    expect(getRetryInfo(uploaded)).toMatchObject(expected);

    const properties = await blob.getProperties();
    expect(getRetryInfo(properties._response)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
    // The mark is a symbol: it adds nothing the SDK or a logger would serialise.
    expect(Object.keys(properties._response)).not.toContain("retryInfo");
    expect(JSON.stringify(getRetryInfo(properties._response))).not.toContain("info.txt");
  });
});
