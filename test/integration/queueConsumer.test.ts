import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { QueueClient, StorageSharedKeyCredential } from "@azure/storage-queue";
import { getRetryInfo, installResilience, type ResilienceHandle } from "../../src/index.js";
import { startRebalancingSimulator, type RebalancingSimulator } from "../../src/testing/simulator/rebalancingSimulator.js";
import { uniqueTableName, withAzurite } from "../support/withAzurite.js";
import { uniqueStorageName } from "../support/withStorageSimulator.js";

// Issue 16's recipe on real components (docs/flow-control.md, "A queue consumer"): a real
// QueueClient on Azurite's queue endpoint feeds N workers that insert into a TableClient
// through the simulator, one partition offline for a while. A write refused because of its
// partition's state goes back to the queue, invisible for the `retryAfterInMs` it carries,
// and the worker takes the next message. Every message is processed; none is lost.

const env = withAzurite({ services: ["table", "queue"] });
let simulator: RebalancingSimulator;
beforeAll(async () => {
  simulator = await startRebalancingSimulator({ target: new URL(env.azurite.tableUrl).origin, seed: 16 });
});
afterAll(async () => {
  await simulator?.stop();
});

const WORKERS = 8;
const MESSAGES = 240;
const PARTITIONS = Array.from({ length: 8 }, (_, i) => `p${i}`);

interface Drained {
  inMs: number;
  sentBack: number;
  processed: number;
}

/** One consumer worker's step: the recipe. Returns false when the queue had nothing for it. */
async function handleOne(queue: QueueClient, table: TableClient, handle: ResilienceHandle, tally: Drained): Promise<boolean> {
  const { receivedMessageItems: [message] } = await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 30 });
  if (message === undefined) return false;
  const order = JSON.parse(message.messageText) as { pk: string; rk: string };
  // Ask before sending: a partition that is not taking attempts now costs no worker time.
  const status = handle.partitionStatus(table.tableName, order.pk);
  let retryAfterInMs = status.available ? undefined : status.retryAfterInMs;
  if (retryAfterInMs === undefined) {
    try {
      await table.createEntity({ partitionKey: order.pk, rowKey: order.rk });
    } catch (error) {
      // 409: a message seen twice, whose insert this consumer already made: done. Anything else
      // goes back; `retryAfterInMs` is on every failure that stems from the partition's state.
      if ((error as { statusCode?: number }).statusCode !== 409) retryAfterInMs = getRetryInfo(error)?.retryAfterInMs ?? 1000;
    }
  }
  if (retryAfterInMs !== undefined) {
    // Back to the queue, invisible until the partition may take it (whole seconds: the queue's unit).
    await queue.updateMessage(message.messageId, message.popReceipt, undefined, Math.max(1, Math.ceil(retryAfterInMs / 1000)));
    tally.sentBack++;
    return true;
  }
  await queue.deleteMessage(message.messageId, message.popReceipt);
  tally.processed++;
  return true;
}

async function drain(offline: boolean): Promise<Drained & { table: string }> {
  const queueName = uniqueStorageName("orders");
  const credentialKey = new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
  const queue = new QueueClient(`${env.azurite.queueUrl}/${queueName}`, credentialKey);
  await queue.create();
  for (let i = 0; i < MESSAGES; i++) await queue.sendMessage(JSON.stringify({ pk: PARTITIONS[i % PARTITIONS.length], rk: `m${i}` }));
  const tableName = uniqueTableName("consumer");
  const tableCredential = new AzureNamedKeyCredential(env.azurite.accountName, env.azurite.accountKey);
  await new TableClient(env.azurite.tableUrl, tableName, tableCredential, { allowInsecureConnection: true }).createTable();
  const table = new TableClient(`${simulator.url}/${env.azurite.accountName}`, tableName, tableCredential, { allowInsecureConnection: true });
  // The consumer runs WORKERS operations at a time: declared, so that no worker waits on a troubled partition that others need.
  const handle = installResilience(table, { caller: { concurrency: WORKERS } });
  simulator.clearFaults();
  // Offline from the start, while every worker is busy: started at 300 ms, the consumer (240 messages in about 0.7 s
  // on a quiet machine) had few of p0's messages left to meet it, and in one run none went back (6-57 in the others).
  if (offline) simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "p0" }, startInMs: 0, durationInMs: 3_000 });
  const tally: Drained = { inMs: 0, sentBack: 0, processed: 0 };
  const started = Date.now();
  await Promise.all(
    Array.from({ length: WORKERS }, async () => {
      while (tally.processed < MESSAGES && Date.now() - started < 60_000) {
        if (!(await handleOne(queue, table, handle, tally))) await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }),
  );
  tally.inMs = Date.now() - started;
  handle.dispose();
  const left = (await queue.getProperties()).approximateMessagesCount;
  expect(left).toBe(0);
  await queue.delete();
  return { ...tally, table: tableName };
}

describe("a queue consumer feeding a TableClient (the recipe)", () => {
  it("processes every message, loses none, with one partition offline; drain time against the same run without the fault", async () => {
    const calm = await drain(false);
    const outage = await drain(true);
    console.log("queue consumer drain:", JSON.stringify({ noFaultInMs: calm.inMs, offlineInMs: outage.inMs, sentBack: outage.sentBack }));
    for (const run of [calm, outage]) {
      expect(run.processed).toBe(MESSAGES);
      const stored: string[] = [];
      const direct = new TableClient(env.azurite.tableUrl, run.table, new AzureNamedKeyCredential(env.azurite.accountName, env.azurite.accountKey), {
        allowInsecureConnection: true,
      });
      for await (const entity of direct.listEntities()) stored.push(`${entity.partitionKey}|${entity.rowKey}`);
      // Every message's entity is there exactly once (an insert cannot duplicate; none missing).
      expect(new Set(stored).size).toBe(MESSAGES);
      expect(stored.length).toBe(MESSAGES);
    }
    // The outage sent messages back rather than holding workers.
    expect(outage.sentBack).toBeGreaterThan(0);
  });
});
