import { createHash, randomBytes } from "node:crypto";
import { beforeEach, describe, expect, it } from "vitest";
import { BlobServiceClient, StorageSharedKeyCredential, type BlobClient, type BlobDownloadResponseParsed } from "@azure/storage-blob";
import { getRetryInfo, installResilience, type RetryObserver } from "../../src/index.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";

// Blob downloads whose body the simulator cuts after half (issue 30, item 2): real BlobClients on
// Azurite through the simulator, every download checked by SHA-256 against what was uploaded. The
// SDK alone fails such a download (its RetriableReadableStream takes the reset for the caller's
// abort); with the package the rest of the range is asked for again, on the first answer's ETag.

const env = withStorageSimulator("blob", { seed: 30 });
let container: string;

const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
const proxyContainer = () => new BlobServiceClient(env.proxyUrl, credential()).getContainerClient(container);
const directContainer = () => new BlobServiceClient(env.directUrl, credential()).getContainerClient(container);
const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");
const MB = 1024 * 1024;

/** The `x-ms-range` and `If-Match` of each Get Blob the simulator received, read by a rule that never faults. */
function watchGets(): Array<{ range: unknown; ifMatch: unknown }> {
  const seen: Array<{ range: unknown; ifMatch: unknown }> = [];
  env.simulator.addFault({
    kind: "slow",
    match: {
      method: "GET",
      predicate: (request) => {
        seen.push({ range: request.headers["x-ms-range"], ifMatch: request.headers["if-match"] });
        return false;
      },
    },
  });
  return seen;
}

/** Cuts the body of the next `count` Get Blob answers after half. */
function cutNextDownloads(count = 1): void {
  env.simulator.addFault({ kind: "cutBodyAfterForward", match: { method: "GET" }, count });
}

async function uploadRandom(name: string, size: number): Promise<Buffer> {
  const bytes = randomBytes(size);
  await directContainer().getBlockBlobClient(name).uploadData(bytes);
  return bytes;
}

async function readBody(response: BlobDownloadResponseParsed): Promise<{ bytes: Buffer; error: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of response.readableStreamBody as AsyncIterable<Buffer>) chunks.push(chunk);
    return { bytes: Buffer.concat(chunks), error: undefined };
  } catch (error) {
    return { bytes: Buffer.concat(chunks), error };
  }
}

function resilientBlob(name: string, options: Parameters<typeof installResilience>[1] = {}): BlobClient {
  const blob = proxyContainer().getBlobClient(name);
  installResilience(blob, { metrics: false, ...options });
  return blob;
}

beforeEach(async () => {
  env.simulator.clearFaults();
  container = uniqueStorageName("resume");
  await directContainer().create();
  env.simulator.resetRecords();
});

describe("a download whose body is cut after half", () => {
  it("fails with the SDK alone (the finding: AbortError, the range never asked for again)", async () => {
    const original = await uploadRandom("alone.bin", 64 * 1024);
    cutNextDownloads();
    const response = await proxyContainer().getBlobClient("alone.bin").download();
    const { bytes, error } = await readBody(response);
    expect((error as Error).name).toBe("AbortError");
    expect(bytes.length).toBeLessThan(original.length);
    expect(env.simulator.count({ method: "GET" })).toBe(1);
  });

  it.each([
    ["64 KB", 64 * 1024],
    ["8 MB", 8 * MB],
  ])("download() of %s: resumed from the byte reached, on the first ETag; SHA-256 matches", async (_label, size) => {
    const original = await uploadRandom("blob.bin", size);
    const gets = watchGets();
    cutNextDownloads();
    const response = await resilientBlob("blob.bin").download();
    const { bytes, error } = await readBody(response);
    expect(error).toBeUndefined();
    expect(sha256(bytes)).toBe(sha256(original));
    expect(gets).toEqual([
      { range: undefined, ifMatch: undefined },
      { range: `bytes=${size / 2}-${size - 1}`, ifMatch: response.etag },
    ]);
    expect(env.simulator.count({ method: "GET", fault: "cutBodyAfterForward" })).toBe(1);
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, resumes: 1, stopReason: "success" });
  });

  it("downloadToBuffer() of 8 MB in 4 MB blocks, each block's body cut once: SHA-256 matches", async () => {
    const original = await uploadRandom("blocks.bin", 8 * MB);
    cutNextDownloads(2);
    const blob = resilientBlob("blocks.bin");
    const bytes = await blob.downloadToBuffer(0, undefined, { blockSize: 4 * MB, concurrency: 2 });
    expect(sha256(bytes)).toBe(sha256(original));
    // Two blocks, each cut once and resumed once: four Get Blob requests, no more.
    expect(env.simulator.count({ method: "GET", fault: "cutBodyAfterForward" })).toBe(2);
    expect(env.simulator.count({ method: "GET" })).toBe(4);
  });
});

describe("a blob overwritten between the cut and the resume", () => {
  /** Overwrites `name` when the resume's backoff starts (2 s: time enough for a local upload), and says when it was done. */
  function overwriteOnResume(name: string): { observer: RetryObserver; done: () => Promise<number> } {
    let overwritten: Promise<number> | undefined;
    const observer: RetryObserver = {
      onRetry: () => {
        overwritten ??= directContainer()
          .getBlockBlobClient(name)
          .uploadData(Buffer.alloc(64 * 1024, 0xee))
          .then(() => performance.now());
      },
    };
    return { observer, done: () => overwritten ?? Promise.reject(new Error("the resume never started")) };
  }
  const slowResume = { retry: { strategy: "fixed", maxRetries: 3, delayInMs: 2_000 }, backoff: {} } as const;

  // The SDK's RetriableReadableStream (what download() hands the caller) passes on only an error named
  // AbortError; any other failure of the body we give it, our resume's 412 included, it replaces.
  it("download() fails with the service's 412 ConditionNotMet (the SDK's stream asks once more, on the same ETag), and no byte of the new version reaches the caller", async () => {
    const original = await uploadRandom("changing.bin", 64 * 1024);
    const { observer, done } = overwriteOnResume("changing.bin");
    let resumedAt = 0;
    const blob = resilientBlob("changing.bin", {
      ...slowResume,
      observers: [observer, { onAttempt: (e) => void (e.attempt === 2 && (resumedAt = performance.now())) }],
    });
    const gets = watchGets();
    cutNextDownloads();
    const response = await blob.download();
    const { bytes, error } = await readBody(response);
    expect(await done()).toBeLessThan(resumedAt); // the blob had changed when the rest was asked for
    // Only bytes of the first version, and fewer than all of them.
    expect(bytes.length).toBe(original.length / 2);
    expect(bytes.equals(original.subarray(0, bytes.length))).toBe(true);
    expect(error).toMatchObject({ name: "RestError", statusCode: 412, code: "ConditionNotMet" });
    // What happened, as the caller reads it (docs/retry.md): the download's response says the body was
    // resumed once and the resume refused; the error is the SDK's own ask's, one attempt and no resume.
    expect(getRetryInfo(response)).toMatchObject({ attempts: 2, resumes: 1, classes: ["success", "permanent"], stopReason: "permanent" });
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, classes: ["permanent"], stopReason: "permanent" });
    expect(getRetryInfo(error)?.resumes).toBeUndefined();
    // The cut answer, our resume (412: the blob changed), the SDK's own ask (412 again): each on the first ETag.
    expect(gets.map((g) => g.ifMatch)).toEqual([undefined, response.etag, response.etag]);
    expect(env.simulator.count({ method: "GET", status: 412 })).toBe(2);
  });

  it("with maxRetryRequests: 0 the SDK's stream fails with its own error instead; still no byte of the new version", async () => {
    const original = await uploadRandom("changing.bin", 64 * 1024);
    const { observer, done } = overwriteOnResume("changing.bin");
    const blob = resilientBlob("changing.bin", { ...slowResume, observers: [observer] });
    cutNextDownloads();
    const response = await blob.download(0, undefined, { maxRetryRequests: 0 });
    const { bytes, error } = await readBody(response);
    await done();
    expect(bytes.equals(original.subarray(0, original.length / 2))).toBe(true);
    expect((error as Error).name).not.toBe("AbortError");
    expect(env.simulator.count({ method: "GET", status: 412 })).toBe(1);
  });
});

describe("the caller's abort during a resume", () => {
  it("ends the download at once (within the resume's 20 s backoff), with an AbortError and no further request", async () => {
    await uploadRandom("abort.bin", 64 * 1024);
    const controller = new AbortController();
    const blob = resilientBlob("abort.bin", {
      retry: { strategy: "fixed", maxRetries: 3, delayInMs: 20_000 },
      backoff: {},
      observers: [{ onRetry: () => void setTimeout(() => controller.abort(), 10) }],
    });
    cutNextDownloads();
    const started = performance.now();
    const response = await blob.download(0, undefined, { abortSignal: controller.signal });
    const { error } = await readBody(response);
    expect((error as Error).name).toBe("AbortError");
    expect(controller.signal.aborted).toBe(true);
    expect(performance.now() - started).toBeLessThan(15_000);
    expect(env.simulator.count({ method: "GET" })).toBe(1);
    expect(getRetryInfo(response)).toMatchObject({ resumes: 1, stopReason: "aborted" });
  });
});
