import { readFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { createPipelineFromOptions } from "@azure/core-rest-pipeline";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { BlobServiceClient, StorageSharedKeyCredential } from "@azure/storage-blob";
import { QueueServiceClient } from "@azure/storage-queue";
import { describe, expect, it } from "vitest";
import { DEVSTORE_ACCOUNT_KEY, DEVSTORE_ACCOUNT_NAME } from "../../src/testing/azurite/devstoreAccount.js";

// Which release of each peer the tests in this run load. The peer matrix
// (scripts/peer-matrix.sh) resolves the peers from another install, and this is its proof that
// the tests ran on the releases it names. Read from the code that runs, not from a
// package.json picked by name: the options object handed to each peer records the file that
// first reads it (a stack frame inside the peer), and the version is that copy's package.json.
// Not the User-Agent: its version is a constant the SDKs forget to bump (data-tables 13.3.2
// sends 13.1.2; Queue 12.23.0 calls itself azure-storage-blob).
// Expected: PEER_MATRIX_MODULES and PEER_MATRIX_EXPECT ("name@version,...") from the matrix,
// else the repo's own node_modules and the versions installed there.

const PEERS = ["@azure/data-tables", "@azure/storage-blob", "@azure/storage-queue", "@azure/core-rest-pipeline"] as const;
type Peer = (typeof PEERS)[number];

const REPO_MODULES = fileURLToPath(new URL("../../node_modules", import.meta.url));
const modules = process.env.PEER_MATRIX_MODULES || REPO_MODULES;

function versionOf(packageDir: string): string {
  return (JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8")) as { version: string }).version;
}

function expectedVersion(name: Peer): string {
  const declared = process.env.PEER_MATRIX_EXPECT;
  if (declared === undefined || declared === "") return versionOf(join(REPO_MODULES, name));
  const entry = declared.split(",").find((item) => item.startsWith(`${name}@`));
  if (entry === undefined) throw new Error(`PEER_MATRIX_EXPECT names no version of ${name}: ${declared}`);
  return entry.slice(name.length + 1);
}

/**
 * The package directory of `name` that runs `construct`: `construct` gets an options object
 * that notes the stack the first time code reads it, and the first frame inside a copy of
 * `name` (`.../node_modules/@azure/x/...`) names the copy.
 */
function loadedCopy(name: Peer, construct: (options: object) => unknown): string {
  let stack = "";
  const options = new Proxy({}, {
    get(target, key, receiver) {
      if (stack === "") {
        const limit = Error.stackTraceLimit;
        Error.stackTraceLimit = 100;
        stack = new Error("read").stack ?? "";
        Error.stackTraceLimit = limit;
      }
      return Reflect.get(target, key, receiver);
    },
  });
  construct(options);
  const marker = `${sep}node_modules${sep}${name.split("/").join(sep)}${sep}`;
  for (const line of stack.split("\n")) {
    const file = /(?:file:\/\/)?(\/[^():]+):\d+:\d+\)?$/.exec(line.trim())?.[1];
    if (file === undefined) continue;
    const at = file.lastIndexOf(marker);
    if (at >= 0) return file.slice(0, at + marker.length - 1);
  }
  throw new Error(`no stack frame inside ${name} read the options:\n${stack}`);
}

const credential = new AzureNamedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
const storageCredential = new StorageSharedKeyCredential(DEVSTORE_ACCOUNT_NAME, DEVSTORE_ACCOUNT_KEY);
const url = `http://127.0.0.1:1/${DEVSTORE_ACCOUNT_NAME}`;
const construct: Record<Peer, (options: object) => unknown> = {
  "@azure/data-tables": (options) => new TableClient(url, "versions", credential, options),
  "@azure/storage-blob": (options) => new BlobServiceClient(url, storageCredential, options),
  "@azure/storage-queue": (options) => new QueueServiceClient(url, storageCredential, options),
  "@azure/core-rest-pipeline": (options) => createPipelineFromOptions(options),
};

describe("the peers this run loads", () => {
  const loaded: string[] = [];
  it.each(PEERS)("%s: the copy in the expected install, at the expected version", (name) => {
    const copy = loadedCopy(name, construct[name]);
    loaded.push(`${name}@${versionOf(copy)}`);
    expect(copy).toBe(join(modules, name));
    expect(versionOf(copy)).toBe(expectedVersion(name));
    if (loaded.length === PEERS.length) console.log(`peers loaded from ${dirname(modules)}: ${loaded.join(" ")}`);
  });
});
