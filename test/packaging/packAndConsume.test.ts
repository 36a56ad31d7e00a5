import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Builds the package, packs it as `npm publish` would, installs the tarball into a fresh
// consumer project (outside the repo, so nothing resolves from our node_modules), then
// `import`s and `require`s it and type-checks consumer files against the published types.

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
let manifest: {
  main: string;
  module: string;
  types: string;
  bin?: Record<string, string>;
  exports: Record<string, unknown>;
};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "asr-pack-"));
  await run(process.execPath, [join(repo, "node_modules", "tsup", "dist", "cli-default.js")], { cwd: repo, env });
  const { stdout } = await run(npm, ["pack", "--json", "--pack-destination", work], { cwd: repo, env });
  const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: PackedFile[] }>;
  if (packed === undefined) throw new Error("npm pack printed no package");
  packedFiles = packed.files.map((f) => f.path);
  manifest = JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as typeof manifest;

  consumer = join(work, "consumer");
  await mkdir(consumer);
  await writeFile(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true }));
  // Dependencies and peers come from npm's cache (`npm ci` filled it); the registry only when missing.
  await run(
    npm,
    ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--no-package-lock", join(work, packed.filename)],
    { cwd: consumer, env },
  );
}, 120_000);

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
import { classify, exponentialBackoff, installResilience, isCircuitOpenError, CircuitOpenError, resilientRetryPolicyName } from "azure-storage-resilience";
import { createEmptyPipeline } from "@azure/core-rest-pipeline";
const pipeline = createEmptyPipeline();
const handle = installResilience(pipeline, { service: "blob" });
const installed = pipeline.getOrderedPolicies().some((p) => p.name === resilientRetryPolicyName);
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
    expect(packedFiles.filter((f) => f.startsWith("docs/api/"))).toEqual([]);
    expect(packedFiles).toContain("README.md");
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
import { createEmptyPipeline } from "@azure/core-rest-pipeline";
const options: InstallResilienceOptions = { service: "queue", retry: { strategy: "fixed", delayInMs: 10 }, tryTimeoutInMs: 5000 };
const handle = installResilience(createEmptyPipeline(), options);
const info: RetryInfo | undefined = getRetryInfo(new Error("x"));
const cls: OutcomeClass | undefined = info?.classes[0] === "circuit_open" ? undefined : info?.classes[0];
handle.dispose();
// @ts-expect-error: an unknown strategy name is a type error for consumers.
installResilience(createEmptyPipeline(), { service: "blob", retry: { strategy: "sometimes" } });
export { cls };
`;
    await writeFile(join(consumer, "check.mts"), typed);
    await writeFile(join(consumer, "check.cts"), typed.replace("export { cls };", "export = cls;"));
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
