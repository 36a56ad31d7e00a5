import { createServer, type Server } from "node:http";
import { addAbortSignal, type Readable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { BlobClient } from "@azure/storage-blob";
import { installResilience } from "../../src/index.js";

// A blob download whose body trickles (issue 17, item 11): the policy's deadlines end at the
// response headers, so the body needs its own. A loopback server plays the slow endpoint:
// the headers at once, then one byte every 20 ms of a 200-byte body (4 s in all).

const BODY_LENGTH = 200;
let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

async function tricklingBlob(): Promise<{ blob: BlobClient; bodyClosed: Promise<void> }> {
  let closed!: () => void;
  const bodyClosed = new Promise<void>((resolve) => (closed = resolve));
  server = createServer((_request, response) => {
    response.writeHead(200, {
      "Content-Length": String(BODY_LENGTH),
      "Content-Type": "application/octet-stream",
      "x-ms-blob-type": "BlockBlob",
      "x-ms-version": "2021-08-06",
      ETag: '"0x1"',
    });
    const timer = setInterval(() => response.write("x"), 20);
    response.on("close", () => {
      clearInterval(timer);
      closed();
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return { blob: new BlobClient(`http://127.0.0.1:${port}/devstoreaccount1/photos/slow.bin`), bodyClosed };
}

async function readAll(body: NodeJS.ReadableStream | Readable): Promise<{ bytes: number; error: unknown }> {
  let bytes = 0;
  try {
    for await (const chunk of body) bytes += (chunk as Buffer).length;
    return { bytes, error: undefined };
  } catch (error) {
    return { bytes, error };
  }
}

describe("a blob download whose body trickles", () => {
  it("is not bounded by maxElapsedInMs or tryTimeoutInMs once its headers arrived (what docs/retry.md says)", async () => {
    const { blob } = await tricklingBlob();
    // Deadlines generous enough for the headers to arrive on a loaded CI machine (a 50 ms
    // try timeout once timed out before the headers there), far shorter than the 4 s body.
    installResilience(blob, { maxElapsedInMs: 1_000, tryTimeoutInMs: 500, metrics: false });
    const response = await blob.download(0, undefined, { maxRetryRequests: 0 });
    // Read well past both deadlines: the body keeps coming.
    const body = addAbortSignal(AbortSignal.timeout(1_500), response.readableStreamBody as Readable);
    const { bytes, error } = await readAll(body);
    expect((error as Error).name).toBe("AbortError"); // our own signal, not the policy, ended it
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(BODY_LENGTH);
  });

  it("the documented recipe, addAbortSignal on the body, ends it and closes the connection", async () => {
    const { blob, bodyClosed } = await tricklingBlob();
    installResilience(blob, { metrics: false }); // the blob preset: 5 min deadline
    const response = await blob.download();
    const body = addAbortSignal(AbortSignal.timeout(300), response.readableStreamBody as Readable);
    const { bytes, error } = await readAll(body);
    expect((error as Error).name).toBe("AbortError");
    expect(bytes).toBeLessThan(BODY_LENGTH);
    await bodyClosed; // the server saw the connection go: nothing keeps reading in the background
  });

  // The policy lends each attempt its own signal; for a streamed body it keeps forwarding the
  // caller's abort until the body closes (endAttempt in src/policies/runAttempt.ts), as the
  // SDK alone does.
  it("download's own abortSignal ends a trickling body with the policy installed", async () => {
    const { blob } = await tricklingBlob();
    installResilience(blob, { metrics: false });
    const response = await blob.download(0, undefined, { abortSignal: AbortSignal.timeout(300), maxRetryRequests: 0 });
    const { bytes, error } = await readAll(response.readableStreamBody as Readable);
    expect((error as Error | undefined)?.name).toBe("AbortError");
    expect(bytes).toBeLessThan(BODY_LENGTH);
  });
});
