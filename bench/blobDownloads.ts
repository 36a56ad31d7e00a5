// Benchmark 9: blob downloads whose body is cut (issue 30, item 2). Real BlobClients on Azurite's
// Blob service through the simulator, which cuts 2 % of Get Blob answers after half their body.
// Each download is checked by SHA-256 against what was uploaded. The same downloads, through a
// simulator of the same seed, with this package's defaults and with the SDK's default retry.
// The figures are counts (failed downloads, mismatched bytes, requests); the times are reported, not targeted.
import { createHash, randomBytes } from "node:crypto";
import { BlobServiceClient, StorageSharedKeyCredential, type BlobClient, type ContainerClient } from "@azure/storage-blob";
import { getRetryInfo, installResilience } from "../src/index.js";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME, startRebalancingSimulator } from "azure-storage-resilience/testing";

/** The knobs of a run. */
export interface BlobDownloadsSettings {
  /** Simulator seeds; every seed runs both configurations. */
  seeds: number[];
  /** The chance that a Get Blob answer's body is cut after half. */
  cutProbability: number;
  /** Blob sizes, each with its count of downloads per seed and configuration (half download(), half downloadToBuffer()). */
  sizes: Array<{ label: string; bytes: number; downloads: number }>;
  /** Downloads in flight at once. */
  concurrency: number;
}

const KB = 1024;
const MB = 1024 * KB;

export const FULL_BLOB_DOWNLOADS_SETTINGS: BlobDownloadsSettings = {
  seeds: [1, 2, 3],
  cutProbability: 0.02,
  sizes: [
    { label: "64 KB", bytes: 64 * KB, downloads: 1_000 },
    { label: "8 MB", bytes: 8 * MB, downloads: 100 },
  ],
  concurrency: 4,
};

export const SMOKE_BLOB_DOWNLOADS_SETTINGS: BlobDownloadsSettings = {
  seeds: [1],
  cutProbability: 0.2,
  sizes: [
    { label: "64 KB", bytes: 64 * KB, downloads: 10 },
    { label: "1 MB", bytes: MB, downloads: 4 },
  ],
  concurrency: 2,
};

/** The two configurations, side by side. */
export type BlobDownloadsConfigurationId = "resilient" | "sdk-default";

/** One configuration's figures for one seed and blob size. */
export interface BlobDownloadsFigures {
  configuration: BlobDownloadsConfigurationId;
  seed: number;
  size: string;
  downloads: number;
  /** Downloads that threw (or whose stream failed). */
  failed: number;
  /** Downloads that completed with bytes whose SHA-256 is not the blob's. */
  mismatched: number;
  /** Get Blob answers the simulator cut. */
  cutAnswers: number;
  /** Get Blob requests the simulator received. */
  getRequests: number;
  /** Resumes recorded in getRetryInfo (download() only: downloadToBuffer hands back no response). */
  resumesSeen: number;
  /** The failures' error names and codes, counted. */
  errors: Record<string, number>;
  elapsedInMs: number;
}

export interface BlobDownloadsResult {
  settings: BlobDownloadsSettings;
  runs: BlobDownloadsFigures[];
  /** Totals over every seed and size, by configuration. */
  totals: Record<BlobDownloadsConfigurationId, { downloads: number; failed: number; mismatched: number; cutAnswers: number }>;
}

interface Blob {
  name: string;
  sha256: string;
}

const sha256 = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

async function readStream(stream: NodeJS.ReadableStream | undefined): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Downloads blob `i` of `blobs` (download() for even i, downloadToBuffer() in 4 MB blocks for odd), and tallies it. */
async function downloadOne(container: ContainerClient, blob: Blob, byBuffer: boolean, figures: BlobDownloadsFigures): Promise<void> {
  const client: BlobClient = container.getBlobClient(blob.name);
  try {
    let bytes: Buffer;
    if (byBuffer) bytes = await client.downloadToBuffer(0, undefined, { blockSize: 4 * MB, concurrency: 2 });
    else {
      const response = await client.download();
      bytes = await readStream(response.readableStreamBody);
      figures.resumesSeen += getRetryInfo(response)?.resumes ?? 0;
    }
    if (sha256(bytes) !== blob.sha256) figures.mismatched += 1;
  } catch (error) {
    figures.failed += 1;
    const e = error as { name?: string; code?: string; statusCode?: number };
    const key = [e.name ?? "unknown", e.code, e.statusCode].filter((part) => part !== undefined).join(" ");
    figures.errors[key] = (figures.errors[key] ?? 0) + 1;
  }
}

async function run(
  blobUrl: string,
  container: string,
  blobs: Blob[],
  configuration: BlobDownloadsConfigurationId,
  seed: number,
  size: BlobDownloadsSettings["sizes"][number],
  settings: BlobDownloadsSettings,
): Promise<BlobDownloadsFigures> {
  const simulator = await startRebalancingSimulator({ target: new URL(blobUrl).origin, service: "blob", seed });
  const credential = new StorageSharedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
  const client = new BlobServiceClient(`${simulator.url}/${DEVSTORE_ACCOUNT_NAME}`, credential).getContainerClient(container);
  const handle = configuration === "resilient" ? installResilience(client, { metrics: false }) : undefined;
  const figures: BlobDownloadsFigures = {
    configuration,
    seed,
    size: size.label,
    downloads: size.downloads,
    failed: 0,
    mismatched: 0,
    cutAnswers: 0,
    getRequests: 0,
    resumesSeen: 0,
    errors: {},
    elapsedInMs: 0,
  };
  try {
    simulator.addFault({ name: "cut", kind: "cutBodyAfterForward", match: { method: "GET" }, probability: settings.cutProbability });
    const started = performance.now();
    let nextIndex = 0;
    await Promise.all(
      Array.from({ length: settings.concurrency }, async () => {
        for (let i = nextIndex++; i < size.downloads; i = nextIndex++) await downloadOne(client, blobs[i % blobs.length] as Blob, i % 2 === 1, figures);
      }),
    );
    figures.elapsedInMs = Math.round(performance.now() - started);
    figures.cutAnswers = simulator.count({ method: "GET", fault: "cutBodyAfterForward" });
    figures.getRequests = simulator.count({ method: "GET" });
    return figures;
  } finally {
    handle?.dispose();
    await simulator.stop();
  }
}

/** Every seed, every size, both configurations; Azurite's Blob service at `blobUrl`. */
export async function runBlobDownloads(blobUrl: string, settings: BlobDownloadsSettings, log: (line: string) => void = () => undefined): Promise<BlobDownloadsResult> {
  const direct = new BlobServiceClient(blobUrl, new StorageSharedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY));
  const runs: BlobDownloadsFigures[] = [];
  for (const size of settings.sizes) {
    const containerName = `bench-downloads-${process.pid}-${size.bytes}`;
    const container = direct.getContainerClient(containerName);
    await container.createIfNotExists();
    // A few distinct blobs per size, random bytes: a byte out of place changes the hash.
    const blobs: Blob[] = [];
    for (let i = 0; i < 4; i++) {
      const bytes = randomBytes(size.bytes);
      const name = `blob-${i}.bin`;
      await container.getBlockBlobClient(name).uploadData(bytes);
      blobs.push({ name, sha256: sha256(bytes) });
    }
    try {
      for (const seed of settings.seeds) {
        for (const configuration of ["resilient", "sdk-default"] as const) {
          const figures = await run(blobUrl, containerName, blobs, configuration, seed, size, settings);
          log(
            `blob downloads, ${size.label}, seed ${seed}, ${configuration}: ${figures.failed} failed, ${figures.mismatched} mismatched ` +
              `of ${figures.downloads} (${figures.cutAnswers} bodies cut, ${figures.getRequests} Get Blob requests) in ${(figures.elapsedInMs / 1000).toFixed(1)} s`,
          );
          runs.push(figures);
        }
      }
    } finally {
      await container.deleteIfExists();
    }
  }
  const totals = {} as BlobDownloadsResult["totals"];
  for (const configuration of ["resilient", "sdk-default"] as const) {
    const mine = runs.filter((r) => r.configuration === configuration);
    const sum = (key: "downloads" | "failed" | "mismatched" | "cutAnswers") => mine.reduce((total, r) => total + r[key], 0);
    totals[configuration] = { downloads: sum("downloads"), failed: sum("failed"), mismatched: sum("mismatched"), cutAnswers: sum("cutAnswers") };
  }
  return { settings, runs, totals };
}
