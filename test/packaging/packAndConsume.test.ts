import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Packs the package as `npm publish` would (`npm pack`: its `prepack` builds; this test
// builds nothing itself, so a tarball without dist/ fails here), installs the tarball into a
// fresh consumer project (outside the repo, so nothing resolves from our node_modules), then
// `import`s and `require`s both entry points, type-checks consumer files against the
// published types, runs the CLI without the optional peers, and uses
// azure-storage-resilience/testing to put a partition offline in front of Azurite.

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "../..");
const bin = join(repo, "node_modules", ".bin");
// Scripts with `#!/usr/bin/env node` (tsup, npm) then run on the repo's Node, like `npm test` does.
const env = { ...process.env, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

interface PackedFile {
  path: string;
}

let work: string;
let consumer: string;
let packedFiles: string[];
let packStartedAt: number;
let manifest: {
  main: string;
  module: string;
  types: string;
  bin?: Record<string, string>;
  exports: Record<string, unknown>;
};

/** Installs packages into the consumer from npm's cache (`npm ci` filled it); the registry only when missing. */
async function install(specs: string[]): Promise<void> {
  await run(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock", ...specs], { cwd: consumer, env });
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "asr-pack-"));
  // File times have a coarser grain than Date.now() on some file systems.
  packStartedAt = Date.now() - 2_000;
  const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: repo, env });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: PackedFile[] }>;
  if (packed === undefined) throw new Error("npm pack printed no package");
  packedFiles = packed.files.map((f) => f.path);
  manifest = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as typeof manifest;

  consumer = join(work, "consumer");
  await mkdir(consumer);
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  // The package and its required peers only: the optional ones (@azure/data-tables, azurite) come later.
  await install([join(work, packed.filename)]);
}, 180_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Every file path a field of the manifest points at, without `./`. */
function manifestTargets(): string[] {
  const targets = [manifest.main, manifest.module, manifest.types, ...Object.values(manifest.bin ?? {})];
  const walk = (value: unknown): void => {
    if (typeof value === "string") targets.push(value);
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(walk);
  };
  walk(manifest.exports);
  return targets.map((t) => t.replace(/^\.\//, ""));
}

const EXPECTED = { classified: "throttled", delays: [1, 3, 7], installed: true, disposed: true, guard: true };

const ESM_CONSUMER = `
import { classify, exponentialBackoff, installResilience, isCircuitOpenError, CircuitOpenError, resilientRetryPolicy } from "azure-storage-resilience";
import { createEmptyPipeline } from "@azure/core-rest-pipeline";
const pipeline = createEmptyPipeline();
const handle = installResilience(pipeline, { service: "blob" });
const installed = pipeline.getOrderedPolicies().some((p) => p.name === resilientRetryPolicy().name);
handle.dispose();
const backoff = exponentialBackoff({ baseDelayInMs: 1, minDelayInMs: 0, jitter: 0 });
console.log(JSON.stringify({
  classified: classify({ status: 503, errorCode: "ServerBusy" }),
  delays: [1, 2, 3].map((n) => backoff.delayInMs(n)),
  installed,
  disposed: pipeline.getOrderedPolicies().length === 0,
  guard: isCircuitOpenError(new CircuitOpenError({ scope: "s", retryAfterInMs: 1 })),
}));
`;

describe("the packed package", () => {
  it("contains every file its manifest points at, and no generated API docs", () => {
    for (const target of manifestTargets()) expect(packedFiles, `package.json points at ${target}`).toContain(target);
    expect(manifestTargets()).toContain("dist/esm/testing/index.js");
    expect(packedFiles.filter((f) => f.startsWith("docs/api/"))).toEqual([]);
    expect(packedFiles).toContain("README.md");
    // package.json says MIT: the licence's text ships with it (npm adds LICENSE by itself when present).
    expect(packedFiles).toContain("LICENSE");
    expect(packedFiles).toContain("docs/testing.md");
  });

  it("was built by npm pack itself (prepack), not by an earlier build", async () => {
    for (const file of ["dist/esm/index.js", "dist/cjs/index.cjs", "dist/esm/testing/index.js", "dist/esm/cli/main.js"]) {
      expect((await stat(join(repo, file))).mtimeMs, `${file} rebuilt by npm pack`).toBeGreaterThanOrEqual(packStartedAt);
    }
  });

  it("is importable as ESM and calls work", async () => {
    await writeFile(join(consumer, "esm.mjs"), ESM_CONSUMER);
    const { stdout } = await run(process.execPath, ["esm.mjs"], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  it("is requirable as CommonJS and calls work", async () => {
    const cjs = ESM_CONSUMER.replace(
      /^import \{([^}]+)\} from "([^"]+)";$/gm,
      (_m, names: string, from: string) => `const {${names}} = require("${from}");`,
    );
    await writeFile(join(consumer, "cjs.cjs"), cjs);
    const { stdout } = await run(process.execPath, ["cjs.cjs"], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual(EXPECTED);
  });

  it("resolves to the ESM build for import and the CommonJS build for require", async () => {
    const probe = `console.log(JSON.stringify([require.resolve("azure-storage-resilience"), typeof require("azure-storage-resilience").classify]));`;
    await writeFile(join(consumer, "resolve.cjs"), probe);
    const { stdout } = await run(process.execPath, ["resolve.cjs"], { cwd: consumer });
    const [resolved, kind] = JSON.parse(stdout) as [string, string];
    expect(resolved.endsWith(join("dist", "cjs", "index.cjs"))).toBe(true);
    expect(kind).toBe("function");
    const esm = await run(process.execPath, ["--input-type=module", "-e", 'console.log(import.meta.resolve("azure-storage-resilience"))'], { cwd: consumer });
    expect(esm.stdout.trim().endsWith("dist/esm/index.js")).toBe(true);
  });

  it("type-checks consumer .mts and .cts files against the published types (tsc --noEmit)", async () => {
    const typed = `
import { installResilience, getRetryInfo, type InstallResilienceOptions, type RetryInfo, type OutcomeClass } from "azure-storage-resilience";
import { startRebalancingSimulator, type FaultRule, type RebalancingSimulator } from "azure-storage-resilience/testing";
import { createEmptyPipeline } from "@azure/core-rest-pipeline";
const options: InstallResilienceOptions = { service: "queue", retry: { strategy: "fixed", delayInMs: 10 }, tryTimeoutInMs: 5000 };
const handle = installResilience(createEmptyPipeline(), options);
const info: RetryInfo | undefined = getRetryInfo(new Error("x"));
const cls: OutcomeClass | undefined = info?.classes[0] === "circuit_open" ? undefined : info?.classes[0];
handle.dispose();
const offline: FaultRule = { kind: "serverBusy", match: { partition: "p1" }, durationInMs: 1000 };
const starting: Promise<RebalancingSimulator> = startRebalancingSimulator({ target: "http://127.0.0.1:1" });
void starting.then((simulator) => simulator.addFault(offline));
// @ts-expect-error: an unknown fault kind is a type error for consumers.
const unknownFault: FaultRule = { kind: "sometimes" };
// @ts-expect-error: an unknown strategy name is a type error for consumers.
installResilience(createEmptyPipeline(), { service: "blob", retry: { strategy: "sometimes" } });
export { cls, unknownFault };
`;
    await writeFile(join(consumer, "check.mts"), typed);
    await writeFile(join(consumer, "check.cts"), typed.replace("export { cls, unknownFault };", "export = [cls, unknownFault];"));
    await writeFile(
      join(consumer, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "NodeNext",
          moduleResolution: "NodeNext",
          target: "ES2022",
          strict: true,
          noEmit: true,
          skipLibCheck: false,
          types: ["node"],
          typeRoots: [join(repo, "node_modules", "@types")],
          // The published types name the optional peers' types (Registry, Meter); the consumer has
          // neither installed (later tests need prom-client absent), so tsc finds them in the repo.
          paths: {
            "prom-client": [join(repo, "node_modules", "prom-client", "index.d.ts")],
            "@opentelemetry/api": [join(repo, "node_modules", "@opentelemetry", "api", "build", "src", "index.d.ts")],
          },
        },
        files: ["check.mts", "check.cts"],
      }),
    );
    const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");
    const result = await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: consumer }).catch((error: { stdout?: string }) => error);
    expect((result as { stdout?: string }).stdout ?? "").toBe("");
  });

  it("declares a bin that was built", () => {
    for (const target of Object.values(manifest.bin ?? {})) {
      expect(existsSync(join(consumer, "node_modules", "azure-storage-resilience", target)), `bin ${target}`).toBe(true);
    }
  });
});

/** Runs the installed bin; resolves with its exit code and output, never throws. */
async function runBin(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const main = join(consumer, "node_modules", "azure-storage-resilience", manifest.bin?.["azure-storage-resilience"] ?? "");
  try {
    const { stdout, stderr } = await run(process.execPath, [main, ...args], { cwd: consumer });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? "", stderr: failed.stderr ?? "" };
  }
}

describe("the installed CLI, without the optional peers", () => {
  it.each([[["--help"]], [["demo", "--help"]], [["stress", "--help"]]])("%j prints help", async (args) => {
    const result = await runBin(args);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Usage: azure-storage-resilience");
  });

  it("demo says in one line what to install, without a stack trace", async () => {
    const result = await runBin(["demo", "--duration", "2"]);
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(result.stderr).toContain("demo needs @azure/data-tables and azurite, not installed here: npm install --save-dev @azure/data-tables azurite");
    expect(result.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|\n\s+at /);
  });
});

describe("the optional metrics peers", () => {
  it("loads and installs without prom-client: default metrics off, an explicit Prometheus sink says what to install", async () => {
    const probe = `
let promClient = true;
try { require.resolve("prom-client"); } catch { promClient = false; }
const { installResilience } = require("azure-storage-resilience");
const { createEmptyPipeline } = require("@azure/core-rest-pipeline");
const handle = installResilience(createEmptyPipeline(), { service: "blob" });
let message;
try { installResilience(createEmptyPipeline(), { service: "blob", metrics: { prefix: "x_" } }); } catch (error) { message = error.message; }
console.log(JSON.stringify({ promClient, metrics: handle.metrics === undefined ? "off" : "on", message }));`;
    await writeFile(join(consumer, "nopromclient.cjs"), probe);
    const { stdout } = await run(process.execPath, ["nopromclient.cjs"], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({
      promClient: false,
      metrics: "off",
      message: "The Prometheus metrics sink (metrics.registry's default) needs prom-client, which is not installed here: npm install prom-client",
    });
  });

  it("records on an OpenTelemetry meter with @opentelemetry/api and the SDK installed, still without prom-client", async () => {
    const version = async (name: string) => (JSON.parse(await readFile(join(repo, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    await install([`@opentelemetry/api@${await version("@opentelemetry/api")}`, `@opentelemetry/sdk-metrics@${await version("@opentelemetry/sdk-metrics")}`]);
    const script = `
import { installResilience } from "azure-storage-resilience";
import { createEmptyPipeline, createPipelineRequest, createHttpHeaders } from "@azure/core-rest-pipeline";
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from "@opentelemetry/sdk-metrics";
const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const provider = new MeterProvider({ readers: [reader] });
const handle = installResilience(createEmptyPipeline(), { service: "blob", metrics: { meter: provider.getMeter("consumer") } });
const request = createPipelineRequest({ url: "https://acct.blob.core.windows.net/c/b", method: "GET" });
await handle.retryPolicy.sendRequest(request, async (req) => ({ request: req, status: 200, headers: createHttpHeaders() }));
await reader.forceFlush();
const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
const attempts = metrics.find((m) => m.descriptor.name === "azure.storage.client.attempts");
handle.dispose();
await provider.shutdown();
console.log(JSON.stringify({ attempts: attempts?.dataPoints.map((p) => [p.attributes["azure.storage.attempt.class"], p.value]) }));`;
    await writeFile(join(consumer, "otel.mjs"), script);
    const { stdout } = await run(process.execPath, ["otel.mjs"], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({ attempts: [["success", 1]] });
  }, 120_000);
});

describe("azure-storage-resilience/testing, installed", () => {
  it("is requirable, and startAzurite without azurite rejects with one line saying what to install", async () => {
    const probe = `
const { startAzurite, startRebalancingSimulator, DEVSTORE_ACCOUNT_NAME } = require("azure-storage-resilience/testing");
startAzurite({ services: ["table"] }).then(
  () => console.log(JSON.stringify({ started: true })),
  (error) => console.log(JSON.stringify({ message: error.message, kinds: [typeof startRebalancingSimulator, DEVSTORE_ACCOUNT_NAME] })),
);`;
    await writeFile(join(consumer, "testing.cjs"), probe);
    const { stdout } = await run(process.execPath, ["testing.cjs"], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({
      message: "startAzurite needs the azurite package: npm install --save-dev azurite",
      kinds: ["function", "devstoreaccount1"],
    });
  });

  it("starts the simulator in front of Azurite, and a test puts one partition offline", async () => {
    const dataTables = JSON.parse(await readFile(join(repo, "node_modules", "@azure", "data-tables", "package.json"), "utf8")) as { version: string };
    await install([`@azure/data-tables@${dataTables.version}`]);
    // The consumer has no azurite of its own: the launcher's azuritePath takes this repo's.
    const script = `
import { AzureNamedKeyCredential, TableClient } from "@azure/data-tables";
import { installResilience } from "azure-storage-resilience";
import { startAzurite, startRebalancingSimulator } from "azure-storage-resilience/testing";

const azurite = await startAzurite({ services: ["table"], azuritePath: ${JSON.stringify(join(repo, "node_modules", "azurite"))} });
const simulator = await startRebalancingSimulator({ target: new URL(azurite.tableUrl).origin });
try {
  const credential = new AzureNamedKeyCredential(azurite.accountName, azurite.accountKey);
  const client = new TableClient(\`\${simulator.url}/\${azurite.accountName}\`, "orders", credential, { allowInsecureConnection: true });
  const resilience = installResilience(client, { metrics: false });
  await client.createTable();
  simulator.addFault({ kind: "serverBusy", match: { partition: "p1" }, durationInMs: 1_500 });
  await client.createEntity({ partitionKey: "p2", rowKey: "a" });
  await client.createEntity({ partitionKey: "p1", rowKey: "b" });
  resilience.dispose();
  // Read around the simulator, straight from Azurite.
  const direct = new TableClient(azurite.tableUrl, "orders", credential, { allowInsecureConnection: true });
  const stored = (await direct.getEntity("p1", "b")).rowKey;
  console.log(JSON.stringify({
    offline: simulator.count({ partition: "p1", fault: "serverBusy" }) > 0,
    neighbourFaults: simulator.count({ partition: "p2", fault: "serverBusy" }),
    stored,
  }));
} finally {
  await simulator.stop();
  await azurite.stop();
}
`;
    await writeFile(join(consumer, "offline.mjs"), script);
    const { stdout } = await run(process.execPath, ["offline.mjs"], { cwd: consumer, timeout: 90_000 });
    expect(JSON.parse(stdout)).toEqual({ offline: true, neighbourFaults: 0, stored: "b" });
  }, 120_000);
});
