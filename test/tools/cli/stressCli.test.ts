import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StressResult } from "../../../tools/stress/stressResult.js";
import { withAzurite } from "../../support/withAzurite.js";
import { runCliProcess } from "./cliProcess.js";

// `stress` in a child process: a tiny ramp on embedded Azurite, then accounts it cannot use.

const KEY = "c2VjcmV0LWtleS10aGF0LW11c3Qtbm90LWxlYWs=";
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stress-cli-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("stress on embedded Azurite", () => {
  it("ramps in steps, sees throttling start, deletes the table and writes the HTML report with its charts", async () => {
    const report = join(dir, "nested", "report.html");
    const args = ["stress", "--entities", "20", "--start-rate", "40", "--max-rate", "240", "--steps", "2", "--step-duration", "2"];
    const run = await runCliProcess([...args, "--throttle-at", "100", "--report", report, "--cleanup", "--json"], { timeoutInMs: 40_000 });
    expect(run.code, run.stderr).toBe(0);
    const result = JSON.parse(run.stdout) as StressResult;
    expect(result.reportPath).toBe(report);
    expect(result.target).toMatchObject({ kind: "embedded", account: "devstoreaccount1", simulatedThrottleAt: 100 });
    expect(result.steps.map((s) => s.requestedEntitiesPerSecond)).toEqual([40, 240]);
    expect(result.steps[0]!.achievedEntitiesPerSecond).toBeGreaterThan(0);
    expect(result.steps[1]!.throttles).toBeGreaterThan(0);
    expect(result.throttlingStarted).toMatchObject({ step: 2, requestedEntitiesPerSecond: 240 });
    expect(result.tableDeleted).toBe(true);
    expect(result.timeline.length).toBeGreaterThanOrEqual(4);

    expect((await stat(report)).size).toBeGreaterThan(2_000);
    const html = await readFile(report, "utf8");
    expect(html.match(/<svg /g)).toHaveLength(3);
    for (const chart of ["Throughput", "Throttles, timeouts and retries", "Latency"]) expect(html).toContain(`aria-label="${chart}`);
    expect(html.match(/<path class="series"/g)!.length).toBeGreaterThanOrEqual(6);
    expect(html).not.toMatch(/<script|src=|href=/i);
    expect(run.stderr).toContain("Ramping 40 -> 240 entities/s");
  }, 45_000);
});

describe("accounts it cannot use: one clear line, exit 1, no stack, no secret", () => {
  const env = withAzurite({ services: ["table"] });

  it("unreachable", async () => {
    const connectionString = `DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=${KEY};TableEndpoint=http://127.0.0.1:1/acct;`;
    const run = await runCliProcess(["stress", "--report", join(dir, "x.html")], { env: { AZURE_STORAGE_CONNECTION_STRING: connectionString }, timeoutInMs: 30_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Nothing accepts connections at 127\.0\.0\.1:1 \(ECONNREFUSED\)/);
    expectNoLeak(run.stdout + run.stderr);
  }, 35_000);

  it("unauthorised", async () => {
    const tableUrl = env.azurite.tableUrl;
    const connectionString = `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${KEY};TableEndpoint=${tableUrl};`;
    const run = await runCliProcess(["stress", "--connection-string", connectionString, "--report", join(dir, "y.html")], { timeoutInMs: 30_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/refused the request \(HTTP 403 AuthorizationFailure\): check the account key or SAS/);
    expect(run.stderr).toContain(new URL(tableUrl).host);
    expectNoLeak(run.stdout + run.stderr);
  }, 35_000);

  it("a connection string it cannot parse", async () => {
    const run = await runCliProcess(["stress", "--connection-string", `AccountKey=${KEY};Nonsense=1`], { timeoutInMs: 20_000 });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/connection string could not be parsed/);
    expectNoLeak(run.stdout + run.stderr);
  }, 25_000);
});

function expectNoLeak(output: string): void {
  expect(output).not.toContain(KEY);
  expect(output).not.toMatch(/\n\s+at /);
  expect(output.trim().split("\n").length).toBeLessThanOrEqual(3);
}
