// Benchmark 6: a queue consumer (issue 16), the recipe of docs/flow-control.md on real
// components. A real QueueClient on Azurite's queue endpoint feeds N workers that insert
// into a TableClient (this package, defaults) through the simulator; one partition goes
// offline for a while. A write refused because of its partition's state goes back to the
// queue, invisible for the `retryAfterInMs` it carries, and the worker takes the next
// message. The figure is the drain time, against the same run with no fault.
import { setTimeout as sleep } from "node:timers/promises";
import type { TableClient } from "@azure/data-tables";
import { QueueClient, StorageSharedKeyCredential } from "@azure/storage-queue";
import { Registry } from "prom-client";
import { getRetryInfo, installResilience, type ResilienceHandle } from "../src/index.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME, startRebalancingSimulator } from "azure-storage-resilience/testing";
import { tableClient } from "./tableConfigurations.js";
import { benchTableName, storedKeys } from "./workload.js";

/** The queue consumer's knobs. */
export interface QueueConsumerSettings {
  /** Workers, each handling one message at a time. */
  workers: number;
  /** Messages in the queue at the start, spread evenly over the partitions. */
  messages: number;
  partitions: number;
  /** When p0 goes offline (503 ServerBusy), from the start of the drain, and for how long. */
  offlineStartInMs: number;
  offlineDurationInMs: number;
  /** A run still going after this long is stopped, and its figures say so. */
  maxDrainInMs: number;
}

export const FULL_QUEUE_CONSUMER_SETTINGS: QueueConsumerSettings = {
  workers: 8,
  messages: 800,
  partitions: 8,
  offlineStartInMs: 500,
  offlineDurationInMs: 3_000,
  maxDrainInMs: 60_000,
};

export const SMOKE_QUEUE_CONSUMER_SETTINGS: QueueConsumerSettings = {
  workers: 4,
  messages: 40,
  partitions: 4,
  offlineStartInMs: 100,
  offlineDurationInMs: 500,
  maxDrainInMs: 10_000,
};

/** One drain's figures. */
export interface QueueConsumerFigures {
  id: "no-fault" | "offline";
  label: string;
  drainInMs: number;
  /** Messages deleted after their insert was made (or found made: a 409 on a message seen twice). */
  processed: number;
  /** Messages sent back to the queue with a visibility timeout from `retryAfterInMs`. */
  sentBack: number;
  /** Of those, sent back without trying the write, because `partitionStatus` said the partition was not available. */
  sentBackBeforeSending: number;
  /** Messages still in the queue at the end (0 unless the run was stopped). */
  leftInQueue: number;
  /** Messages whose entity is not in the table at the end. */
  lost: number;
}

export interface QueueConsumerResult {
  settings: QueueConsumerSettings;
  runs: QueueConsumerFigures[];
}

interface Tally {
  processed: number;
  sentBack: number;
  sentBackBeforeSending: number;
}

/** One worker's step, the recipe. Returns false when the queue had nothing visible. */
async function handleOne(queue: QueueClient, table: TableClient, handle: ResilienceHandle, tally: Tally): Promise<boolean> {
  const { receivedMessageItems: [message] } = await queue.receiveMessages({ numberOfMessages: 1, visibilityTimeout: 30 });
  if (message === undefined) return false;
  const order = JSON.parse(message.messageText) as { pk: string; rk: string };
  // Ask before sending: a partition that is not taking attempts now costs no worker time.
  const status = handle.partitionStatus(table.tableName, order.pk);
  let retryAfterInMs = status.available ? undefined : status.retryAfterInMs;
  if (retryAfterInMs !== undefined) tally.sentBackBeforeSending += 1;
  else {
    try {
      await table.createEntity({ partitionKey: order.pk, rowKey: order.rk });
    } catch (error) {
      // 409: a message seen twice whose insert was already made: done. Anything else goes back.
      if ((error as { statusCode?: number }).statusCode !== 409) retryAfterInMs = getRetryInfo(error)?.retryAfterInMs ?? 1000;
    }
  }
  if (retryAfterInMs !== undefined) {
    // Invisible until the partition may take it, in whole seconds (the queue's unit).
    await queue.updateMessage(message.messageId, message.popReceipt, undefined, Math.max(1, Math.ceil(retryAfterInMs / 1000)));
    tally.sentBack += 1;
    return true;
  }
  await queue.deleteMessage(message.messageId, message.popReceipt);
  tally.processed += 1;
  return true;
}

/** Drains the queue once, with p0 offline or not; Azurite's Tables at `tableUrl`, its Queues at `queueUrl`. */
async function drain(tableUrl: string, queueUrl: string, settings: QueueConsumerSettings, offline: boolean): Promise<QueueConsumerFigures> {
  const name = benchTableName("qc", offline ? "offline" : "calm").toLowerCase();
  const queue = new QueueClient(`${queueUrl}/${name}`, new StorageSharedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY));
  await queue.create();
  // Connections and the JIT for the queue's three calls, before anything is timed.
  for (let i = 0; i < 10; i++) {
    await queue.sendMessage("warm-up");
    const { receivedMessageItems: [m] } = await queue.receiveMessages({ numberOfMessages: 1 });
    if (m !== undefined) await queue.deleteMessage(m.messageId, m.popReceipt);
  }
  const bodies = Array.from({ length: settings.messages }, (_, i) => JSON.stringify({ pk: `p${i % settings.partitions}`, rk: `m${i}` }));
  for (let i = 0; i < bodies.length; i += 16) await Promise.all(bodies.slice(i, i + 16).map((body) => queue.sendMessage(body)));
  const direct = tableClient(tableUrl, name);
  await direct.createTable();
  const simulator = await startRebalancingSimulator({ target: new URL(tableUrl).origin, service: "table" });
  const table = tableClient(`${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, name);
  const handle = installResilience(table, { metrics: { registry: new Registry() } });
  try {
    // Connections and the JIT, on a partition of its own.
    for (let i = 0; i < 5; i++) await table.upsertEntity({ partitionKey: "warm", rowKey: `w${i}` }).catch(() => undefined);
    if (offline) {
      simulator.addFault({ name: "offline", kind: "serverBusy", match: { partition: "p0" }, startInMs: settings.offlineStartInMs, durationInMs: settings.offlineDurationInMs });
    }
    const tally: Tally = { processed: 0, sentBack: 0, sentBackBeforeSending: 0 };
    const started = performance.now();
    const due = () => tally.processed < settings.messages && performance.now() - started < settings.maxDrainInMs;
    await Promise.all(
      Array.from({ length: settings.workers }, async () => {
        while (due()) if (!(await handleOne(queue, table, handle, tally))) await sleep(100);
      }),
    );
    const drainInMs = Math.round(performance.now() - started);
    const leftInQueue = (await queue.getProperties()).approximateMessagesCount ?? 0;
    const stored = await storedKeys(direct);
    const lost = bodies.filter((body) => {
      const order = JSON.parse(body) as { pk: string; rk: string };
      return !stored.has(`${order.pk}|${order.rk}`);
    }).length;
    return {
      id: offline ? "offline" : "no-fault",
      label: offline ? `p0 offline (503 ServerBusy) for ${settings.offlineDurationInMs / 1000} s` : "no fault",
      drainInMs,
      ...tally,
      leftInQueue,
      lost,
    };
  } finally {
    handle.dispose();
    await simulator.stop();
    await queue.delete().catch(() => undefined);
    await direct.deleteTable().catch(() => undefined);
  }
}

/** The drain with no fault, then the same with p0 offline. */
export async function runQueueConsumer(
  tableUrl: string,
  queueUrl: string,
  settings: QueueConsumerSettings,
  log: (line: string) => void = () => undefined,
): Promise<QueueConsumerResult> {
  const runs: QueueConsumerFigures[] = [];
  for (const offline of [false, true]) {
    const figures = await drain(tableUrl, queueUrl, settings, offline);
    log(`queue consumer, ${figures.label}: ${figures.processed}/${settings.messages} processed in ${(figures.drainInMs / 1000).toFixed(1)} s, ${figures.sentBack} sent back, ${figures.lost} lost`);
    runs.push(figures);
  }
  return { settings, runs };
}
