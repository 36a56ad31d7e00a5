import { beforeEach, describe, expect, it } from "vitest";
import { QueueClient, QueueServiceClient, StorageSharedKeyCredential } from "@azure/storage-queue";
import { getRetryInfo, installResilience, type OperationEvent, type RetryObserver } from "../../src/index.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";

// The real @azure/storage-queue clients against Azurite's Queue service, through the
// rebalancing simulator; attempts are counted at the simulator and by the policy.

const env = withStorageSimulator("queue", { seed: 13 });
let queue: string;

const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
// The SDK's own retry left on (fast): if it still sat under ours it would add requests.
const sdkRetry = { retryOptions: { maxTries: 4, retryDelayInMs: 5, maxRetryDelayInMs: 5 } };
const directQueue = () => new QueueServiceClient(env.directUrl, credential()).getQueueClient(queue);
const fast = { strategy: "fixed", maxRetries: 20, delayInMs: 60 } as const;

function ends(): RetryObserver & { events: OperationEvent[] } {
  const events: OperationEvent[] = [];
  return { events, onOperationEnd: (e) => events.push(e) };
}

beforeEach(async () => {
  env.simulator.clearFaults();
  queue = uniqueStorageName("queue");
  await directQueue().create();
  env.simulator.resetRecords();
});

describe("Queue send and receive ride out rebalancing", () => {
  it("through a QueueServiceClient: send and receive each ride out a ServerBusy window and a reset", async () => {
    const service = new QueueServiceClient(env.proxyUrl, credential(), sdkRetry);
    const seen = ends();
    // One queue is one partition scope: send and receive together would trip the breaker
    // (tested on its own elsewhere) and its wait would blur the attempt counts here.
    installResilience(service, { retry: fast, observers: [seen], circuitBreaker: false });
    const client = service.getQueueClient(queue);

    env.simulator.addFault({ kind: "serverBusy", match: { resource: queue, method: "POST" }, durationInMs: 250 });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { resource: queue, method: "POST" }, count: 1 });
    await client.sendMessage("order 42");
    const sendBusy = env.simulator.count({ resource: queue, method: "POST", fault: "serverBusy" });
    expect(sendBusy).toBeGreaterThanOrEqual(2);
    expect(env.simulator.count({ resource: queue, method: "POST" })).toBe(sendBusy + 2);
    expect(seen.events.at(-1)).toMatchObject({ stopReason: "success", attempts: sendBusy + 2 });

    env.simulator.addFault({ kind: "serverBusy", match: { resource: queue, method: "GET" }, durationInMs: 250 });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { resource: queue, method: "GET" }, count: 1 });
    const received = await client.receiveMessages();
    expect(received.receivedMessageItems.map((m) => m.messageText)).toEqual(["order 42"]);
    const receiveBusy = env.simulator.count({ resource: queue, method: "GET", fault: "serverBusy" });
    expect(receiveBusy).toBeGreaterThanOrEqual(2);
    expect(env.simulator.count({ resource: queue, method: "GET" })).toBe(receiveBusy + 2);
    expect(seen.events.at(-1)).toMatchObject({ stopReason: "success", attempts: receiveBusy + 2 });
    // Exactly one message was stored (the received one still counts while invisible):
    // the reset came before the send reached storage, so its retry made no duplicate.
    expect((await directQueue().getProperties()).approximateMessagesCount).toBe(1);
  });

  it("a QueueClient built on its own, with the queue preset (no options): a 2 s ServerBusy window", async () => {
    const client = new QueueClient(`${env.proxyUrl}/${queue}`, credential(), sdkRetry);
    const seen = ends();
    installResilience(client, { observers: [seen] });
    env.simulator.addFault({ kind: "serverBusy", match: { resource: queue }, durationInMs: 2000 });
    await client.sendMessage("preset");
    const attempts = env.simulator.count({ resource: queue });
    expect(attempts).toBeGreaterThanOrEqual(2);
    expect(env.simulator.count({ resource: queue, forwarded: true })).toBe(1);
    expect(seen.events.at(-1)).toMatchObject({ stopReason: "success", attempts });
    const peeked = await directQueue().peekMessages();
    expect(peeked.peekedMessageItems.map((m) => m.messageText)).toEqual(["preset"]);
  }, 30_000);

  it("a receive retried after a reset that came after storage dequeued: empty now, the message back after its visibility timeout", async () => {
    await directQueue().sendMessage("dequeued once");
    const client = new QueueClient(`${env.proxyUrl}/${queue}`, credential());
    installResilience(client, { retry: fast });
    env.simulator.addFault({ kind: "resetAfterForward", match: { resource: queue, method: "GET" }, count: 1 });
    // Queues deliver at least once: the first, lost answer had made the message invisible.
    const retried = await client.receiveMessages({ visibilityTimeout: 1 });
    expect(retried.receivedMessageItems).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const later = await client.receiveMessages();
    expect(later.receivedMessageItems.map((m) => [m.messageText, m.dequeueCount])).toEqual([["dequeued once", 2]]);
  });
});

describe("no nested retry on Queue clients", () => {
  it("with retries off, one 503 is one request at the wire", async () => {
    const client = new QueueClient(`${env.proxyUrl}/${queue}`, credential(), sdkRetry);
    installResilience(client, { retry: { strategy: "none" } });
    env.simulator.addFault({ kind: "serverBusy", match: { resource: queue } });
    await expect(client.sendMessage("x")).rejects.toMatchObject({ statusCode: 503, code: "ServerBusy" });
    expect(env.simulator.count({ resource: queue })).toBe(1);
  });

  it("(control) without it, the SDK's storageRetryPolicy sends the 503 four times", async () => {
    const client = new QueueClient(`${env.proxyUrl}/${queue}`, credential(), sdkRetry);
    env.simulator.addFault({ kind: "serverBusy", match: { resource: queue } });
    await expect(client.sendMessage("x")).rejects.toMatchObject({ statusCode: 503 });
    expect(env.simulator.count({ resource: queue })).toBe(4);
  });

  it("Azurite's QueueNotFound is permanent: one attempt", async () => {
    const client = new QueueClient(`${env.proxyUrl}/${queue}-missing`, credential());
    const seen = ends();
    installResilience(client, { retry: fast, observers: [seen] });
    await expect(client.sendMessage("x")).rejects.toMatchObject({ statusCode: 404, code: "QueueNotFound" });
    expect(seen.events).toMatchObject([{ attempts: 1, stopReason: "permanent" }]);
  });
});

describe("getRetryInfo on successful Queue results", () => {
  // `_response` is a copy whose request is a copy too, so the mark on the request is lost:
  // the retry loop marks the response it returns as well (attachRetryInfo in finish()).
  it("reads result._response and the result itself, after retries and at first try", async () => {
    const client = new QueueClient(`${env.proxyUrl}/${queue}`, credential());
    installResilience(client, { retry: fast, circuitBreaker: false });
    env.simulator.addFault({ kind: "serverBusy", match: { resource: queue, method: "POST" }, count: 2 });
    const sent = await client.sendMessage("order 43");
    const expected = { attempts: 3, classes: ["throttled", "throttled", "success"], stopReason: "success" };
    expect(getRetryInfo(sent._response)).toMatchObject(expected);
    expect(getRetryInfo(sent)).toMatchObject(expected);

    const received = await client.receiveMessages();
    expect(received.receivedMessageItems.map((m) => m.messageText)).toEqual(["order 43"]);
    expect(getRetryInfo(received._response)).toMatchObject({ attempts: 1, classes: ["success"], stopReason: "success" });
  });
});
