import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AppendBlobClient,
  BlobClient,
  BlobServiceClient,
  BlockBlobClient,
  ContainerClient,
  newPipeline,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { QueueClient, QueueServiceClient, StorageSharedKeyCredential as QueueSharedKeyCredential } from "@azure/storage-queue";
import type { Pipeline } from "@azure/core-rest-pipeline";
import { getRetryInfo, installResilience, type AttemptEvent } from "../../../src/index.js";
import { resilientRetryPolicyName } from "../../../src/policies/resilientRetryPolicy.js";
import { storageClientContextPipeline } from "../../../src/install/findPipeline.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../../src/testing/azurite/devstoreAccount.js";

// Blob and Queue clients against a local server that answers every request with one
// status: proves where installResilience puts its policy and that the SDK's own
// storageRetryPolicy no longer retries underneath it.

let server: Server;
let account: string;
let requests = 0;
let answer = { status: 503, code: "ServerBusy" };

beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on("end", () => {
      const body = `<?xml version="1.0" encoding="utf-8"?><Error><Code>${answer.code}</Code><Message>x</Message></Error>`;
      res.writeHead(answer.status, { "content-type": "application/xml", "x-ms-error-code": answer.code, "content-length": Buffer.byteLength(body) });
      res.end(req.method === "HEAD" ? undefined : body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  account = `http://127.0.0.1:${(server.address() as AddressInfo).port}/${DEVSTORE_ACCOUNT_NAME}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = 0;
  answer = { status: 503, code: "ServerBusy" };
});

const blobCredential = () => new StorageSharedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
const queueCredential = () => new QueueSharedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
// The SDK's retry made fast but left on, so a nested retry would show as extra requests.
const sdkRetry = { retryOptions: { maxTries: 3, retryDelayInMs: 1, maxRetryDelayInMs: 1 } };

/** The core pipeline behind a storage client, read the way the package reads it (the place moves between releases). */
const corePipeline = (client: object): Pipeline => storageClientContextPipeline(client) as Pipeline;
const names = (client: object): string[] => corePipeline(client).getOrderedPolicies().map((p) => p.name);

interface ClientCase {
  name: string;
  service: "blob" | "queue";
  create: () => object;
  /** One call that sends exactly one request when nothing retries. */
  call: (client: object) => Promise<unknown>;
}

const cases: ClientCase[] = [
  {
    name: "BlobServiceClient",
    service: "blob",
    create: () => new BlobServiceClient(account, blobCredential(), sdkRetry),
    call: (c) => (c as BlobServiceClient).getProperties(),
  },
  {
    name: "ContainerClient",
    service: "blob",
    create: () => new ContainerClient(`${account}/photos`, blobCredential(), sdkRetry),
    call: (c) => (c as ContainerClient).getProperties(),
  },
  {
    name: "BlobClient",
    service: "blob",
    create: () => new BlobClient(`${account}/photos/cat.jpg`, blobCredential(), sdkRetry),
    call: (c) => (c as BlobClient).getProperties(),
  },
  {
    name: "BlockBlobClient",
    service: "blob",
    create: () => new BlockBlobClient(`${account}/photos/cat.jpg`, blobCredential(), sdkRetry),
    call: (c) => (c as BlockBlobClient).upload("meow", 4),
  },
  {
    name: "AppendBlobClient",
    service: "blob",
    create: () => new AppendBlobClient(`${account}/logs/today.log`, blobCredential(), sdkRetry),
    call: (c) => (c as AppendBlobClient).appendBlock("line\n", 5),
  },
  {
    name: "QueueServiceClient",
    service: "queue",
    create: () => new QueueServiceClient(account, queueCredential(), sdkRetry),
    call: (c) => (c as QueueServiceClient).getProperties(),
  },
  {
    name: "QueueClient",
    service: "queue",
    create: () => new QueueClient(`${account}/orders`, queueCredential(), sdkRetry),
    call: (c) => (c as QueueClient).sendMessage("hello"),
  },
];

describe.each(cases)("installResilience on a $name", ({ service, create, call }) => {
  it("replaces storageRetryPolicy in the Retry phase, detects the service, and dispose puts it back", () => {
    const client = create();
    const before = names(client);
    expect(before).toContain("storageRetryPolicy");
    const handle = installResilience(client, { circuitBreaker: false });
    expect(handle.service).toBe(service);
    const after = names(client);
    expect(after).not.toContain("storageRetryPolicy");
    // Same slot: after deserialization, before signing, so each attempt is signed afresh.
    expect(after.indexOf(resilientRetryPolicyName)).toBe(before.indexOf("storageRetryPolicy"));
    expect(handle.removedPolicies.map((p) => p.name)).toEqual(["storageRetryPolicy"]);
    handle.dispose();
    expect(names(client)).toEqual(before);
  });

  it("with retries off, one 503 is exactly one request: the SDK's retry is gone", async () => {
    const client = create();
    installResilience(client, { retry: { strategy: "none" }, circuitBreaker: false });
    const error = await call(client).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RestError", statusCode: 503 });
    expect(requests).toBe(1);
    expect(getRetryInfo(error)).toMatchObject({ attempts: 1, classes: ["throttled"], stopReason: "retries-exhausted" });
  });

  it("(control) without it, the SDK's storageRetryPolicy sends the 503 three times", async () => {
    await expect(call(create())).rejects.toMatchObject({ statusCode: 503 });
    expect(requests).toBe(3);
  });

  it("retries with its own strategy and counts attempts", async () => {
    const client = create();
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 2, delayInMs: 1 }, circuitBreaker: false });
    await expect(call(client)).rejects.toMatchObject({ statusCode: 503 });
    expect(requests).toBe(3);
  });
});

describe("storage clients built from one another", () => {
  it("share one core pipeline: installing on the service client covers derived clients, old and new", async () => {
    const service = new BlobServiceClient(account, blobCredential(), sdkRetry);
    const before = service.getContainerClient("photos").getBlockBlobClient("early.jpg");
    installResilience(service, { retry: { strategy: "none" }, circuitBreaker: false });
    const after = service.getContainerClient("photos").getBlockBlobClient("late.jpg");
    for (const client of [before, after]) {
      expect(names(client)).toContain(resilientRetryPolicyName);
      expect(names(client)).not.toContain("storageRetryPolicy");
    }
    await expect(before.upload("x", 1)).rejects.toMatchObject({ statusCode: 503 });
    await expect(after.upload("x", 1)).rejects.toMatchObject({ statusCode: 503 });
    expect(requests).toBe(2);
  });

  it("installing on a derived client replaces the installation on the shared pipeline", () => {
    const service = new QueueServiceClient(account, queueCredential());
    const first = installResilience(service, { circuitBreaker: false });
    installResilience(service.getQueueClient("orders"), { circuitBreaker: false });
    expect(names(service).filter((n) => n === resilientRetryPolicyName)).toHaveLength(1);
    // The first handle was disposed by the second install: disposing it again changes nothing.
    first.dispose();
    expect(names(service)).toContain(resilientRetryPolicyName);
  });
});

describe("blob and queue error codes", () => {
  it.each([
    [503, "ServerBusy", "throttled"],
    [500, "OperationTimedOut", "timeout"],
    [500, "InternalError", "transient"],
    [404, "BlobNotFound", "permanent"],
    [409, "ContainerAlreadyExists", "permanent"],
  ] as const)("%i %s is classified %s from x-ms-error-code", async (status, code, expected) => {
    answer = { status, code };
    const attempts: AttemptEvent[] = [];
    const client = new BlobClient(`${account}/photos/cat.jpg`, blobCredential());
    installResilience(client, {
      retry: { strategy: "none" },
      circuitBreaker: false,
      observers: [{ onAttempt: (event) => attempts.push(event) }],
    });
    // A HEAD: no body at all, so the header is the only place the code can come from.
    await expect(client.getProperties()).rejects.toMatchObject({ statusCode: status });
    expect(attempts.map((a) => [a.status, a.errorCode, a.attemptClass])).toEqual([[status, code, expected]]);
  });
});

describe("finding the pipeline of a storage client", () => {
  it("recognises a user's subclass of an SDK client", () => {
    class AuditedQueueClient extends QueueClient {}
    const handle = installResilience(new AuditedQueueClient(`${account}/orders`, queueCredential()), { circuitBreaker: false });
    expect(handle.service).toBe("queue");
  });

  it("refuses a bare storage Pipeline and says what to pass instead", () => {
    expect(() => installResilience(newPipeline(blobCredential()))).toThrow(/storage Pipeline .*pass the BlobServiceClient/);
  });

  // Queue 12.32 keeps the core pipeline one level down, at storageClientContext.queuesClient.pipeline;
  // Blob (and Queue up to 12.31) at storageClientContext.pipeline. Each shape is rebuilt here around a
  // real client's core pipeline, so both places are tested whichever release is installed.
  it.each([
    ["storageClientContext.pipeline (Blob, Queue up to 12.31)", (core: Pipeline) => ({ pipeline: core })],
    ["storageClientContext.queuesClient.pipeline (Queue from 12.32)", (core: Pipeline) => ({ queuesClient: { pipeline: core } })],
  ])("finds the core pipeline at %s and installs on it", (_place, context) => {
    const client = new QueueClient(`${account}/orders`, queueCredential());
    const core = corePipeline(client);
    const reshaped = Object.create(client, { storageClientContext: { value: context(core) } }) as object;
    const handle = installResilience(reshaped, { circuitBreaker: false });
    expect(core.getOrderedPolicies().map((p) => p.name)).toContain(resilientRetryPolicyName);
    expect(core.getOrderedPolicies().map((p) => p.name)).not.toContain("storageRetryPolicy");
    handle.dispose();
  });

  it("refuses a storage client whose core pipeline moved, instead of installing nothing", () => {
    const client = new BlobClient(`${account}/photos/cat.jpg`, blobCredential());
    const moved = Object.create(client, { storageClientContext: { value: undefined } }) as object;
    expect(() => installResilience(moved)).toThrow(/storageClientContext\.pipeline/);
  });
});
