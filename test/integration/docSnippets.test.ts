import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { TableServiceClient } from "@azure/data-tables";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { withAzurite } from "../support/withAzurite.js";

// The self-contained snippets of README.md and docs/getting-started.md, run as a user runs them:
// each as its own module (imports "azure-storage-resilience", resolved to the sources as
// scripts/sourceHooks.ts does for npm start), with AZURE_STORAGE_CONNECTION_STRING naming a
// fresh Azurite. Issue 30: getting-started's Tables snippet failed on Azurite (plain http
// needs allowInsecureConnection). The other snippets of docs/ are fragments of a larger
// program (they use a client made elsewhere), checked by the type check of the tests that
// run the same calls, not here. Issue 37: the Blob and Queue snippets failed against the Azurite
// that npx gave (3.35.0 refused the API version the SDKs send); they run here against the
// devDependency's Azurite with its API version check on, and getting-started names that version.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const HOOKS = fileURLToPath(new URL("../../scripts/sourceHooks.ts", import.meta.url));
// Inside the repository (its /tmp/, ignored by git), so that the snippets' imports resolve from its
// node_modules; not under node_modules, where Node does not strip types.
const WORK = fileURLToPath(new URL(`../../tmp/doc-snippets-${process.pid}/`, import.meta.url));

const env = withAzurite({ skipApiVersionCheck: false });

/** The fenced code blocks of `language` in a Markdown file, each with the heading it sits under. */
async function codeBlocks(file: string, language: string): Promise<Array<{ heading: string; code: string }>> {
  const text = await readFile(new URL(file, `file://${ROOT}`), "utf8");
  const blocks: Array<{ heading: string; code: string }> = [];
  let heading = "";
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.startsWith("#")) heading = line.replace(/^#+\s*/, "");
    if (line.trim() !== "```" + language) continue;
    const end = lines.indexOf("```", i + 1);
    blocks.push({ heading, code: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return blocks;
}

/** Runs `code` as a module file of its own; resolves with its exit code and output. */
async function runModule(name: string, code: string, connectionString: string): Promise<{ code: number | null; output: string }> {
  await mkdir(WORK, { recursive: true });
  const file = `${WORK}${name}`;
  await writeFile(file, code);
  return new Promise((resolve, reject) => {
    // process.execPath is the Node 24 running vitest: it strips TypeScript types itself.
    const child = spawn(process.execPath, ["--experimental-transform-types", "--disable-warning=ExperimentalWarning", "--import", HOOKS, file], {
      cwd: ROOT,
      env: { ...process.env, AZURE_STORAGE_CONNECTION_STRING: connectionString, AZURE_LOG_LEVEL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (exitCode) => {
      clearTimeout(killer);
      resolve({ code: exitCode, output });
    });
  });
}

// README's quick start and getting-started's Tables snippet both write order-42 to "orders": each starts without it.
beforeEach(async () => {
  const tables = TableServiceClient.fromConnectionString(env.azurite.connectionString, { allowInsecureConnection: true });
  await tables.deleteTable("orders");
});

afterAll(async () => {
  await rm(WORK, { recursive: true, force: true });
});

describe("the documentation's self-contained snippets run against Azurite", () => {
  it("README's quick start (plain JavaScript)", async () => {
    const [quickStart] = (await codeBlocks("README.md", "js")).filter((b) => b.code.includes("installResilience"));
    expect(quickStart).toBeDefined();
    const run = await runModule("quickstart.mjs", quickStart!.code, env.azurite.connectionString);
    expect(run.code, run.output).toBe(0);
    expect(run.output).toContain("order-42");
  });

  it("getting-started.md names the Azurite these snippets run against", async () => {
    const doc = await readFile(new URL("docs/getting-started.md", `file://${ROOT}`), "utf8");
    const installed = (JSON.parse(await readFile(new URL("node_modules/azurite/package.json", `file://${ROOT}`), "utf8")) as { version: string }).version;
    const named = new Set([...doc.matchAll(/azurite@\^?(\d+\.\d+\.\d+)/g)].map((m) => m[1]));
    expect(named).toEqual(new Set([installed]));
  });

  it.each(["Tables", "Blobs", "Queues"])("getting-started.md, %s", async (heading) => {
    const blocks = (await codeBlocks("docs/getting-started.md", "ts")).filter((b) => b.heading === heading);
    expect(blocks).toHaveLength(1);
    const run = await runModule(`getting-started-${heading.toLowerCase()}.ts`, blocks[0]!.code, env.azurite.connectionString);
    expect(run.code, run.output).toBe(0);
  });
});
