import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  BlobSASPermissions,
  BlobServiceClient,
  BlockBlobClient,
  generateBlobSASQueryParameters,
  StorageSharedKeyCredential,
} from "@azure/storage-blob";
import { installResilience } from "../../src/index.js";
import { captureAzureLog, type AzureLogCapture } from "../support/captureAzureLog.js";
import { uniqueStorageName, withStorageSimulator } from "../support/withStorageSimulator.js";

// What AZURE_LOG_LEVEL=info shows for a real BlockBlobClient authorised by a SAS (a secret
// in the query string): each retry's fields, breaker transitions at warning, and no secret.

const env = withStorageSimulator("blob", { seed: 17 });
let container: string;
let lines: string[];
let logCapture: AzureLogCapture;

const credential = () => new StorageSharedKeyCredential(env.azurite.accountName, env.azurite.accountKey);

beforeEach(async () => {
  env.simulator.clearFaults();
  container = uniqueStorageName("logs");
  await new BlobServiceClient(env.directUrl, credential()).getContainerClient(container).create();
  logCapture = captureAzureLog("info");
  lines = logCapture.lines;
});

afterEach(() => {
  logCapture.stop();
});

/** A BlockBlobClient through the simulator, authorised by a SAS in its URL; returns the signature too. */
function sasClient(blobName: string): { client: BlockBlobClient; signature: string } {
  const sas = generateBlobSASQueryParameters(
    { containerName: container, blobName, permissions: BlobSASPermissions.parse("rcw"), expiresOn: new Date(Date.now() + 3600_000) },
    credential(),
  );
  return { client: new BlockBlobClient(`${env.proxyUrl}/${container}/${blobName}?${sas.toString()}`), signature: sas.signature };
}

const ours = (level: string) => lines.filter((l) => l.startsWith(`azure:storage-resilience:${level} `));

function expectNoSecrets(signature: string): void {
  for (const line of lines) {
    expect(line).not.toContain(signature);
    expect(line).not.toContain(encodeURIComponent(signature));
    expect(line).not.toContain(env.azurite.accountKey);
  }
  for (const line of lines.filter((l) => l.startsWith("azure:storage-resilience:"))) {
    expect(line).not.toMatch(/https?:\/\/|\?|sig=|se=|sv=|authorization|SharedKey/i);
  }
}

describe("retry logs on a real BlockBlobClient", () => {
  it("each retry logs operation, class, attempt, delay and scope at info; no SAS, key or URL anywhere", async () => {
    const { client, signature } = sasClient("report.csv");
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 5, delayInMs: 20 } });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "report.csv" }, count: 2 });
    env.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "report.csv" }, count: 1 });
    await client.upload("a,b\n1,2\n", 8);

    const retries = ours("info").filter((l) => l.includes("Retrying: "));
    const scope = `scope="blob|devstoreaccount1|${container}|report.csv"`;
    expect(retries).toEqual([
      `azure:storage-resilience:info Retrying: operation=upload_blob ${scope} attempt=1 class=throttled status=503 errorCode=ServerBusy delayInMs=20 delaySource=backoff`,
      `azure:storage-resilience:info Retrying: operation=upload_blob ${scope} attempt=2 class=throttled status=503 errorCode=ServerBusy delayInMs=20 delaySource=backoff`,
      `azure:storage-resilience:info Retrying: operation=upload_blob ${scope} attempt=3 class=transient delayInMs=20 delaySource=backoff`,
    ]);
    expect(ours("info").find((l) => l.includes("Operation ended: "))).toContain("attempts=4 stopReason=success");
    expect(env.simulator.count({ partition: "report.csv" })).toBe(4);
    expectNoSecrets(signature);
  });

  it("a breaker transition logs at warning with the scope", async () => {
    const { client, signature } = sasClient("hot.csv");
    // Retries 300 ms apart: the 2nd failure in a row comes after the blob has served nothing for 250 ms, and opens its circuit.
    installResilience(client, {
      retry: { strategy: "fixed", maxRetries: 3, delayInMs: 300 },
      circuitBreaker: { consecutiveFailures: 2, resetTimeoutInMs: 60_000 },
      caller: { failFast: true },
    });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "hot.csv" } });
    await expect(client.upload("x", 1)).rejects.toBeDefined();
    expect(ours("warning").find((l) => l.includes("opened"))).toContain(`"blob|devstoreaccount1|${container}|hot.csv"`);
    expectNoSecrets(signature);
  });

  it("a stream body that cannot be replayed: a warning says so, and why nothing was retried", async () => {
    const { client, signature } = sasClient("once.csv");
    installResilience(client, { retry: { strategy: "fixed", maxRetries: 5, delayInMs: 20 } });
    env.simulator.addFault({ kind: "serverBusy", match: { partition: "once.csv" }, count: 1 });
    await expect(client.upload(Readable.from([Buffer.from("x")]), 1)).rejects.toMatchObject({ statusCode: 503 });
    expect(ours("warning").some((l) => /stream/.test(l))).toBe(true);
    expect(ours("info").find((l) => l.includes("Operation ended: "))).toContain("attempts=1 stopReason=body-not-replayable");
    expectNoSecrets(signature);
  });
});
