import { isRestError, type RestError } from "@azure/core-rest-pipeline";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Registry } from "prom-client";
import { classify } from "../../src/classification/classify.js";
import { installResilience } from "../../src/install/installResilience.js";
import { startAzurite } from "../../src/testing/azurite/startAzurite.js";
import { uniqueTableName, withTableSimulator } from "../support/withAzurite.js";

const EXIT_HOOKS = fileURLToPath(new URL("../../scripts/sourceHooks.ts", import.meta.url));
const EXIT_WITHOUT_STOP = fileURLToPath(new URL("../fixtures/azuriteExit/exitWithoutStop.ts", import.meta.url));

const fixture = withTableSimulator({ seed: 7 });
const table = uniqueTableName("sim");
let client: TableClient;
let direct: TableClient;

/** The rejection of `promise`, which must be a RestError. */
async function restErrorOf(promise: Promise<unknown>): Promise<RestError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isRestError(error)) throw new Error(`expected a RestError, got ${String(error)}`);
  return error;
}

async function storedRow(partitionKey: string, rowKey: string): Promise<Record<string, unknown> | undefined> {
  try {
    return await direct.getEntity(partitionKey, rowKey);
  } catch (error) {
    if (isRestError(error) && error.statusCode === 404) return undefined;
    throw error;
  }
}

beforeAll(async () => {
  client = fixture.tableClient(table);
  direct = fixture.directTableClient(table);
  await client.createTable();
});

beforeEach(() => {
  fixture.simulator.clearFaults();
  fixture.simulator.resetRecords();
});

describe("rebalancing simulator in front of Azurite, with the real TableClient", () => {
  it("passes signed requests through unchanged: insert, get, query, batch", async () => {
    await client.createEntity({ partitionKey: "plain", rowKey: "1", value: 1 });
    await client.upsertEntity({ partitionKey: "plain", rowKey: "2", value: 2 }, "Replace");
    const entity = await client.getEntity<{ value: number }>("plain", "1");
    expect(entity.value).toBe(1);
    const rows = [];
    for await (const row of client.listEntities({ queryOptions: { filter: "PartitionKey eq 'plain'" } })) rows.push(row);
    expect(rows).toHaveLength(2);
    await client.submitTransaction([
      ["create", { partitionKey: "plain", rowKey: "3" }],
      ["delete", { partitionKey: "plain", rowKey: "2" }],
    ]);
    expect(await storedRow("plain", "3")).toBeDefined();
    expect(await storedRow("plain", "2")).toBeUndefined();

    const sim = fixture.simulator;
    expect(sim.count()).toBe(5);
    expect(sim.count({ partition: "plain", forwarded: true, fault: undefined })).toBe(5);
    expect(sim.records.map((r) => r.status)).toEqual([204, 204, 200, 200, 202]);
    expect(sim.records.every((r) => r.scope?.resource === table && r.scope.account === "devstoreaccount1")).toBe(true);
    expect(JSON.stringify(sim.records)).not.toMatch(/SharedKey|authorization/i);
  });

  it("passes Azurite's response headers through as it sent them, Keep-Alive included (Azurite's own keep-alive test, issue 37)", async () => {
    // Azurite's "Table Keep-Alive header response test": getAccessPolicy answers Keep-Alive: timeout=5.
    const headersOf = async (through: TableClient) => {
      let headers: Record<string, string> = {};
      await through.getAccessPolicy({ onResponse: (response) => (headers = response.headers.toJSON()) });
      return headers;
    };
    // A client of its own (an agent of its own, keep-alive as the SDK's default), straight to Azurite.
    const straight = new TableClient(fixture.azurite.tableUrl, table, new AzureNamedKeyCredential(fixture.azurite.accountName, fixture.azurite.accountKey), {
      allowInsecureConnection: true,
    });
    const fromAzurite = await headersOf(straight);
    const throughSimulator = await headersOf(client);
    expect(fromAzurite["keep-alive"]).toBe("timeout=5");
    expect(throughSimulator["keep-alive"]).toBe(fromAzurite["keep-alive"]);
    expect(throughSimulator.connection).toBe(fromAzurite.connection);
    // Every header Azurite sent reaches the client (values that differ per request aside).
    expect(Object.keys(throughSimulator).sort()).toEqual(Object.keys(fromAzurite).sort());
  });

  it("answers 503 ServerBusy for the rebalancing partition only", async () => {
    const sim = fixture.simulator;
    sim.addFault({ name: "move-hot", kind: "serverBusy", match: { partition: "hot" } });

    const error = await restErrorOf(client.createEntity({ partitionKey: "hot", rowKey: "1" }));
    expect(error.statusCode).toBe(503);
    expect(error.response?.headers.get("x-ms-error-code")).toBe("ServerBusy");
    expect(error.response?.headers.get("x-ms-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(error.response?.headers.get("content-type")).toBe("application/json;odata=minimalmetadata;streaming=true;charset=utf-8");
    const body = JSON.parse(error.response?.bodyAsText ?? "{}") as { "odata.error": { code: string; message: { value: string } } };
    expect(body["odata.error"].code).toBe("ServerBusy");
    expect(body["odata.error"].message.value).toMatch(/^The server is busy\.\nRequestId:.+\nTime:\d{4}-\d\d-\d\dT[\d:]+\.\d{7}Z$/);
    await expect(restErrorOf(client.getEntity("hot", "1"))).resolves.toMatchObject({ statusCode: 503 });
    await expect(restErrorOf(client.submitTransaction([["create", { partitionKey: "hot", rowKey: "2" }]]))).resolves.toMatchObject({
      statusCode: 503,
    });

    await client.createEntity({ partitionKey: "cold", rowKey: "1" });
    await client.submitTransaction([["create", { partitionKey: "cold", rowKey: "2" }]]);
    expect(await storedRow("hot", "1")).toBeUndefined();
    expect(await storedRow("hot", "2")).toBeUndefined();
    expect(await storedRow("cold", "2")).toBeDefined();

    expect(sim.count({ partition: "hot", fault: "serverBusy", ruleName: "move-hot", forwarded: false, status: 503 })).toBe(3);
    expect(sim.count({ partition: "cold", fault: undefined })).toBe(2);
    expect(sim.totals).toMatchObject({ requests: 5, forwarded: 2, faults: { serverBusy: 3 } });
  });

  it("applies the write but resets the connection on resetAfterForward", async () => {
    fixture.simulator.addFault({ kind: "resetAfterForward", match: { partition: "lost-ack", method: "POST" }, count: 1 });
    const error = await restErrorOf(client.createEntity({ partitionKey: "lost-ack", rowKey: "1", v: 42 }));
    expect(error.statusCode).toBeUndefined();
    expect(error.code).toBe("ECONNRESET");
    expect(await storedRow("lost-ack", "1")).toMatchObject({ v: 42 });
    expect(fixture.simulator.records[0]).toMatchObject({ fault: "resetAfterForward", forwarded: true, upstreamStatus: 204 });
    expect(fixture.simulator.records[0]?.status).toBeUndefined();

    // count: 1 — the retry a resilient client would make now sees the row already there.
    const retry = await restErrorOf(client.createEntity({ partitionKey: "lost-ack", rowKey: "1", v: 42 }));
    expect(retry.statusCode).toBe(409);
  });

  it("never forwards on resetBeforeForward", async () => {
    fixture.simulator.addFault({ kind: "resetBeforeForward", match: { partition: "cut" } });
    const error = await restErrorOf(client.createEntity({ partitionKey: "cut", rowKey: "1" }));
    expect(error.code).toBe("ECONNRESET");
    expect(await storedRow("cut", "1")).toBeUndefined();
    expect(fixture.simulator.count({ fault: "resetBeforeForward", forwarded: false })).toBe(1);
  });

  it("answers 500 OperationTimedOut after the delay, without forwarding", async () => {
    fixture.simulator.addFault({ kind: "operationTimedOut", match: { partition: "stuck" }, delayInMs: 150 });
    const started = performance.now();
    const error = await restErrorOf(client.createEntity({ partitionKey: "stuck", rowKey: "1" }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(error.statusCode).toBe(500);
    expect(error.response?.headers.get("x-ms-error-code")).toBe("OperationTimedOut");
    expect(error.response?.bodyAsText).toContain('"code":"OperationTimedOut"');
    expect(await storedRow("stuck", "1")).toBeUndefined();
    expect(fixture.simulator.count({ fault: "operationTimedOut", status: 500, forwarded: false })).toBe(1);
  });

  it("sends throttling answers with a retry hint, and fixed permanent errors", async () => {
    const sim = fixture.simulator;
    sim.addFault({ kind: "throttle", match: { partition: "busy" }, status: 429, retryAfter: { ms: 1500 } });
    sim.addFault({ kind: "status", match: { partition: "denied" }, status: 403, errorCode: "AuthorizationFailure" });
    sim.addFault({ kind: "status", match: { partition: "nyi" }, status: 501 });

    const throttled = await restErrorOf(client.createEntity({ partitionKey: "busy", rowKey: "1" }));
    expect(throttled.statusCode).toBe(429);
    expect(throttled.response?.headers.get("x-ms-retry-after-ms")).toBe("1500");
    expect(throttled.response?.headers.get("x-ms-error-code")).toBe("ServerBusy");

    const denied = await restErrorOf(client.getEntity("denied", "1"));
    expect(denied.statusCode).toBe(403);
    expect(denied.response?.headers.get("x-ms-error-code")).toBe("AuthorizationFailure");

    const notImplemented = await restErrorOf(client.deleteEntity("nyi", "1"));
    expect(notImplemented.statusCode).toBe(501);
    expect(notImplemented.response?.headers.get("x-ms-error-code")).toBe("NotImplemented");
    expect(sim.count({ forwarded: true })).toBe(0);
  });

  it("delays the real response on slow", async () => {
    fixture.simulator.addFault({ kind: "slow", match: { partition: "sluggish" }, delayInMs: 150 });
    const started = performance.now();
    await client.createEntity({ partitionKey: "sluggish", rowKey: "1" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(await storedRow("sluggish", "1")).toBeDefined();
    expect(fixture.simulator.records[0]).toMatchObject({ fault: "slow", forwarded: true, status: 204, upstreamStatus: 204 });
  });

  it("models a rebalance: the partition is offline for a window, then comes back", async () => {
    const sim = fixture.simulator;
    sim.addFault({ kind: "serverBusy", match: { partition: "moving" }, durationInMs: 300 });
    await expect(restErrorOf(client.createEntity({ partitionKey: "moving", rowKey: "1" }))).resolves.toMatchObject({ statusCode: 503 });
    await new Promise((resolve) => setTimeout(resolve, 350));
    await client.createEntity({ partitionKey: "moving", rowKey: "1" });
    expect(sim.count({ partition: "moving", fault: "serverBusy" })).toBe(1);
    expect(sim.count({ partition: "moving", status: 204 })).toBe(1);
  });

  it("lets a retrying client through once a counted fault is used up", async () => {
    const sim = fixture.simulator;
    sim.addFault({ kind: "serverBusy", match: { partition: "flaky" }, count: 2 });
    const retrying = fixture.tableClient(table, { retryOptions: { maxRetries: 3, retryDelayInMs: 10, maxRetryDelayInMs: 20 } });
    await retrying.createEntity({ partitionKey: "flaky", rowKey: "1" });
    expect(sim.count({ partition: "flaky" })).toBe(3);
    expect(sim.count({ partition: "flaky", fault: "serverBusy" })).toBe(2);
    expect(sim.count({ partition: "flaky", status: 204 })).toBe(1);
  });
});

describe("frozen endpoint and refused connections, with the real TableClient", () => {
  it("holds a frozen request unanswered until the freeze ends, then resets it: ECONNRESET, classified transient, nothing stored", async () => {
    const sim = fixture.simulator;
    sim.addFault({ name: "frozen", kind: "freeze", durationInMs: 500 });
    let settled = false;
    const pending = restErrorOf(client.createEntity({ partitionKey: "frozen", rowKey: "1" })).finally(() => (settled = true));
    await expect.poll(() => sim.totals.requests).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(settled).toBe(false);
    const error = await pending;
    expect(error.statusCode).toBeUndefined();
    expect(error.code).toBe("ECONNRESET");
    expect(classify({ error })).toBe("transient");
    expect(await storedRow("frozen", "1")).toBeUndefined();
    expect(sim.count({ fault: "freeze", ruleName: "frozen", forwarded: false, status: undefined })).toBe(1);
  });

  it("a client with this package installed rides out a freeze: its write is applied once the endpoint is back", async () => {
    const resilient = fixture.tableClient(table);
    const handle = installResilience(resilient, { metrics: { registry: new Registry() } });
    try {
      fixture.simulator.addFault({ kind: "freeze", durationInMs: 400 });
      await resilient.createEntity({ partitionKey: "thawed", rowKey: "1", v: 1 });
      expect(await storedRow("thawed", "1")).toMatchObject({ v: 1 });
      expect(fixture.simulator.count({ partition: "thawed", fault: "freeze" })).toBeGreaterThanOrEqual(1);
      expect(fixture.simulator.count({ partition: "thawed", forwarded: true })).toBe(1);
    } finally {
      handle.dispose();
    }
  });

  it("refuses connections: the SDK's Node client reports ECONNREFUSED, classified transient; a resilient client succeeds after", async () => {
    const sim = fixture.simulator;
    const fresh = fixture.tableClient(table);
    sim.addFault({ kind: "refuseConnections", durationInMs: 600 });
    // The SDK's clients share one keep-alive pool: let it see its idle connections closed, or the
    // request goes out on one of them and meets a reset instead of a refusal.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const error = await restErrorOf(fresh.getEntity("refused", "1"));
    expect(error.code).toBe("ECONNREFUSED");
    expect(error.statusCode).toBeUndefined();
    expect(classify({ error })).toBe("transient");
    expect(sim.totals.requests).toBe(0);

    const resilient = fixture.tableClient(table);
    const handle = installResilience(resilient, { metrics: { registry: new Registry() } });
    try {
      await resilient.createEntity({ partitionKey: "refused", rowKey: "1" });
      expect(await storedRow("refused", "1")).toBeDefined();
      expect(sim.count({ partition: "refused", forwarded: true })).toBe(1);
    } finally {
      handle.dispose();
    }
  });
});

describe("startAzurite", () => {
  it("starts only the services asked for, and stops them", async () => {
    const azurite = await startAzurite({ services: ["blob"] });
    try {
      expect(azurite.services).toEqual(["blob"]);
      expect(azurite.blobUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
      expect(() => azurite.tableUrl).toThrow(/table service was not started; started: blob/);
      expect(azurite.connectionString).toMatch(/;BlobEndpoint=http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1;$/);
      expect(azurite.connectionString).not.toMatch(/TableEndpoint|QueueEndpoint/);
      expect(inspect(azurite)).not.toContain(azurite.accountKey);
      expect(JSON.stringify(azurite)).not.toContain(azurite.accountKey);
      const listing = await fetch(`${azurite.blobUrl}?comp=list`);
      expect(listing.status).toBe(403); // unsigned, but answered by Azurite
    } finally {
      await azurite.stop();
      await azurite.stop();
    }
    await expect(fetch(`${azurite.blobUrl}?comp=list`)).rejects.toThrow();
  });

  it.runIf(process.platform === "linux")("detached: Azurite leads a process group of its own (a Ctrl-C to ours misses it), and stop() ends it", async () => {
    const before = new Set((await childProcesses()).map((child) => child.pid));
    const azurite = await startAzurite({ services: ["table"], detached: true });
    let started: ChildInfo[];
    try {
      started = (await childProcesses()).filter((child) => !before.has(child.pid));
      expect(started).toHaveLength(1);
      expect(started[0]!.processGroup).toBe(started[0]!.pid);
      expect(started[0]!.processGroup).not.toBe(ownProcessGroup());
    } finally {
      await azurite.stop();
    }
    expect((await childProcesses()).map((child) => child.pid)).not.toContain(started[0]!.pid);
  });

  it.runIf(process.platform === "linux")("not detached (the default): Azurite stays in the caller's process group", async () => {
    const before = new Set((await childProcesses()).map((child) => child.pid));
    const azurite = await startAzurite({ services: ["table"] });
    try {
      const started = (await childProcesses()).filter((child) => !before.has(child.pid));
      expect(started.map((child) => child.processGroup)).toEqual([ownProcessGroup()]);
    } finally {
      await azurite.stop();
    }
  });

  it("a program that exits without stop() leaves no Azurite running and no work directory behind", async () => {
    const temp = await mkdtemp(join(tmpdir(), "exit-without-stop-"));
    try {
      const child = spawn(process.execPath, ["--import", EXIT_HOOKS, EXIT_WITHOUT_STOP], { env: { ...process.env, TMPDIR: temp }, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
      expect(output).toContain("started");
      expect(code).toBe(0);
      // Its work directory (made in the temp folder it was given) went with it.
      expect(await readdir(temp)).toEqual([]);
    } finally {
      await rm(temp, { recursive: true, force: true });
    }
  });

  it("validates its options", async () => {
    await expect(startAzurite({ services: [] })).rejects.toThrow(RangeError);
    await expect(startAzurite({ services: ["file" as never] })).rejects.toThrow(/services must contain only .*; got "file"/);
    await expect(startAzurite({ startTimeoutInMs: 0 })).rejects.toThrow(/startTimeoutInMs must be between 1 and/);
    await expect(startAzurite({ detached: "yes" as never })).rejects.toThrow(/^detached must be a boolean; got "yes"\.$/);
    await expect(startAzurite({ skipApiVersionCheck: null as never })).rejects.toThrow(/^skipApiVersionCheck must be a boolean; got null\.$/);
  });

  it("serves any API version by default; skipApiVersionCheck: false refuses one Azurite does not know, as Azure would", async () => {
    // Unsigned, so a request past the version check is refused by authentication (403) instead.
    const listWithVersion = (azurite: { blobUrl: string }) => fetch(`${azurite.blobUrl}?comp=list`, { headers: { "x-ms-version": "2099-01-01" } });
    const lenient = await startAzurite({ services: ["blob"] });
    try {
      expect((await listWithVersion(lenient)).status).toBe(403);
    } finally {
      await lenient.stop();
    }
    const strict = await startAzurite({ services: ["blob"], skipApiVersionCheck: false });
    try {
      const answer = await listWithVersion(strict);
      expect(answer.status).toBe(400);
      expect(await answer.text()).toContain("The API version 2099-01-01 is not supported by Azurite");
    } finally {
      await strict.stop();
    }
  });

  it("takes azuritePath for an Azurite installed elsewhere, and says in one line when none is there", async () => {
    await expect(startAzurite({ azuritePath: "" })).rejects.toThrow(/^azuritePath must be a non-empty string; got ""\.$/);
    const empty = await mkdtemp(join(tmpdir(), "no-azurite-"));
    try {
      await expect(startAzurite({ services: ["table"], azuritePath: empty })).rejects.toThrow(
        /^startAzurite: azuritePath ".+" holds no azurite package \(no dist\/src\/table\/main\.js in it\)\.$/,
      );
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
    const azurite = await startAzurite({ services: ["table"], azuritePath: fileURLToPath(new URL("../../node_modules/azurite", import.meta.url)) });
    try {
      expect(azurite.tableUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/devstoreaccount1$/);
    } finally {
      await azurite.stop();
    }
  });

  it("reports a failed start with Azurite's stderr", async () => {
    const directory = await mkdtemp(join(tmpdir(), "azurite-test-"));
    const notAFolder = join(directory, "file");
    await writeFile(notAFolder, "");
    try {
      await expect(startAzurite({ services: ["table"], location: notAFolder })).rejects.toThrow(
        /^Azurite table service exited during start \(exit code 1\)\. stderr: .+/s,
      );
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

interface ChildInfo {
  pid: number;
  processGroup: number;
}

/** This process's live children and their process groups, from /proc (Linux). */
async function childProcesses(): Promise<ChildInfo[]> {
  const children: ChildInfo[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = await statFields(entry);
    // Fields after the command name: state, ppid, pgrp. A zombie has exited already.
    if (fields !== undefined && fields[0] !== "Z" && Number(fields[1]) === process.pid) {
      children.push({ pid: Number(entry), processGroup: Number(fields[2]) });
    }
  }
  return children;
}

function ownProcessGroup(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

async function statFields(pid: string): Promise<string[] | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => undefined);
  // The command name (in parentheses) may hold spaces: split after its closing parenthesis.
  return stat?.slice(stat.lastIndexOf(")") + 2).split(" ");
}
