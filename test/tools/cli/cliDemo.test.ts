import { mkdtemp, readdir, readFile, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEVSTORE_ACCOUNT_KEY } from "azure-storage-resilience/testing";
import type { DemoSummary } from "../../../tools/demo/demoSummary.js";
import { runCliProcess, waitForOutput } from "./cliProcess.js";

// The demo as a newcomer runs it, in a child process: Azurite, the simulator, both clients,
// the metrics endpoint, the verification; then the command line's failure modes.

const privateTmp: string[] = [];
afterAll(async () => {
  for (const dir of privateTmp) await rm(dir, { recursive: true, force: true });
});

describe("demo", () => {
  it("a short run: nothing lost, the baseline alongside, /metrics answered during the run, no secret printed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "demo-json-"));
    privateTmp.push(dir);
    const jsonFile = join(dir, "summary.json");
    const run = await runCliProcess(["demo", "--duration", "4", "--json", "--json-file", jsonFile, "--seed", "3"], { timeoutInMs: 45_000 });
    expect(run.stderr).toContain("Metrics: http://127.0.0.1:");
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout) as DemoSummary;
    expect(JSON.parse(await readFile(jsonFile, "utf8"))).toEqual(summary);
    expect(run.stderr).toContain(`Summary written to ${jsonFile}`);
    expect(summary.interrupted).toBe(false);
    expect(summary.options).toEqual({ durationInSeconds: 4, ratePerSecond: 40, partitions: 4, seed: 3, baseline: true });

    for (const result of [summary.resilient, summary.baseline!]) {
      expect(result.fired).toBe(result.planned);
      expect(result.table.total.operations).toBe(result.planned);
      expect(result.verification.acknowledged).toBeGreaterThan(50);
      expect(result.verification.lost).toBe(0);
      expect(result.verification.found).toBe(result.verification.acknowledged);
      expect(result.table.partitions.map((p) => p.partition)).toEqual(["p0", "p1", "p2", "p3"]);
    }
    // The package's promise: a write reported failed but stored was marked possibly applied.
    expect(summary.resilient.verification.failedButStoredUnmarked).toBe(0);
    expect(summary.baseline).not.toBeNull();
    expect(summary.baseline!.label).toContain("SDK's default retry");
    // The faults really happened, to both clients.
    expect(summary.resilient.table.total.throttles).toBeGreaterThan(0);
    expect(summary.baseline!.table.total.throttles).toBeGreaterThan(0);
    expect(summary.resilient.table.partitions[1]!.timeouts).toBeGreaterThan(0);
    expect(summary.baseline!.table.partitions[0]!.breakerOpens).toBeNull();

    expect(summary.metrics.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect(summary.metrics.scrape).toMatchObject({ status: 200 });
    expect(summary.metrics.scrape!.azureStorageSeries).toBeGreaterThan(0);

    expect(run.stdout + run.stderr).not.toContain(DEVSTORE_ACCOUNT_KEY);
    expect(run.stdout + run.stderr).not.toMatch(/AccountKey=|SharedKey /);
  }, 50_000);

  it("Ctrl-C to the whole process group, as a terminal sends it: a summary of what ran, exit 130, Azurite stopped and its temporary data removed", async () => {
    // A private temporary folder, so that only this run's Azurite workspace can be in it.
    const tmp = await mkdtemp(join(tmpdir(), "demo-sigint-"));
    privateTmp.push(tmp);
    let sent = 0;
    let azuriteBeforeStop = 0;
    const run = await runCliProcess(["demo", "--duration", "60", "--json", "--no-baseline"], {
      env: { TMPDIR: tmp },
      timeoutInMs: 40_000,
      // Its own group, as a shell starts a command, so that the signal below reaches every process in it.
      processGroup: process.platform !== "win32",
      onStart: (child, output) => {
        void waitForOutput(output, (o) => o.stderr.includes("Ctrl-C stops early"))
          .then(() => new Promise((resolve) => setTimeout(resolve, 1_500)))
          .then(async () => {
            azuriteBeforeStop = await processesWithCwdIn(tmp);
            sent = Date.now();
            // A terminal's Ctrl-C signals the foreground process group, not one process.
            if (process.platform === "win32") child.kill("SIGINT");
            else process.kill(-child.pid!, "SIGINT");
          });
      },
    });
    expect(run.code, run.stderr).toBe(130);
    if (process.platform === "linux") expect(azuriteBeforeStop).toBeGreaterThan(0); // Azurite was running in there
    expect(Date.now() - sent).toBeLessThan(20_000);
    expect(run.stderr).toContain("Stopping:");
    const summary = JSON.parse(run.stdout) as DemoSummary;
    expect(summary.interrupted).toBe(true);
    expect(summary.baseline).toBeNull();
    expect(summary.resilient.fired).toBeGreaterThan(0);
    expect(summary.resilient.fired).toBeLessThan(summary.resilient.planned);
    expect(summary.resilient.verification.lost).toBe(0);
    expect(summary.ranForSeconds).toBeLessThan(10);
    expect(await readdir(tmp)).toEqual([]);
    expect(await processesWithCwdIn(tmp)).toBe(0);
  }, 45_000);
});

describe("bad command lines exit 2 and name the flag", () => {
  it.each([
    [["demo", "--duration", "abc"], /--duration must be a number of seconds from 1 to 3600; got "abc"/],
    [["demo", "--partitions", "0"], /--partitions must be an integer/],
    [["demo", "--speed", "3"], /unknown flag --speed/],
    [["demo", "--rate"], /--rate needs a value/],
    [["stress", "--steps", "x"], /--steps must be an integer/],
    [["launch"], /unknown command "launch"/],
    [[], /a command is required/],
  ])("%j", async (args, message) => {
    const run = await runCliProcess(args, { timeoutInMs: 20_000 });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/--help" for usage/);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(run.stdout).toBe("");
  }, 25_000);

  it("--help prints the flags and exits 0", async () => {
    const run = await runCliProcess(["demo", "--help"], { timeoutInMs: 20_000 });
    expect(run.code).toBe(0);
    for (const flag of ["--duration", "--rate", "--partitions", "--seed", "--json", "--no-baseline", "--help"]) expect(run.stdout).toContain(flag);
  }, 25_000);
});

/** How many processes run with their working directory inside `dir` (Linux /proc; 0 elsewhere). */
async function processesWithCwdIn(dir: string): Promise<number> {
  let entries: string[];
  try {
    entries = await readdir("/proc");
  } catch {
    return 0;
  }
  let count = 0;
  for (const pid of entries.filter((e) => /^\d+$/.test(e))) {
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => "");
    if (cwd.startsWith(dir)) count++;
  }
  return count;
}
