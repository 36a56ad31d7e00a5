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
// Issue 37 too: docs/tracing.md's set-up printed no span in an ES-module app; its two files run
// here with its command, in a folder of their own, and their printed spans are read back.

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

/** Runs Node with the source hooks, then `args`, in `cwd`; resolves with its exit code, its stdout, and both streams. */
function runNode(args: string[], cwd: string, extraEnv: Record<string, string>): Promise<{ code: number | null; stdout: string; output: string }> {
  return new Promise((resolve, reject) => {
    // process.execPath is the Node running vitest (24, or 22 in CI's second run): it strips TypeScript types itself.
    const child = spawn(process.execPath, ["--experimental-transform-types", "--disable-warning=ExperimentalWarning", "--import", HOOKS, ...args], {
      cwd,
      env: { ...process.env, ...extraEnv, AZURE_LOG_LEVEL: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      output += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const killer = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.once("error", reject);
    child.once("close", (exitCode) => {
      clearTimeout(killer);
      resolve({ code: exitCode, stdout, output });
    });
  });
}

/** Runs `code` as a module file of its own; resolves with its exit code and output. */
async function runModule(name: string, code: string, connectionString: string): Promise<{ code: number | null; output: string }> {
  await mkdir(WORK, { recursive: true });
  const file = `${WORK}${name}`;
  await writeFile(file, code);
  return runNode([file], ROOT, { AZURE_STORAGE_CONNECTION_STRING: connectionString });
}

/** A span as OpenTelemetry's ConsoleSpanExporter prints it (util.inspect of an object, one per span). */
interface PrintedSpan {
  name: string;
  id: string;
  parentId: string | undefined;
  text: string;
}

/** The spans in a ConsoleSpanExporter's output: each printed from a line "{" to a line "}". */
function printedSpans(stdout: string): PrintedSpan[] {
  return [...stdout.matchAll(/^\{\n([\s\S]*?)\n\}$/gm)].map((match) => {
    const text = match[1] as string;
    return {
      name: /^ {2}name: '([^']*)'/m.exec(text)?.[1] ?? "",
      id: /^ {2}id: '([0-9a-f]+)'/m.exec(text)?.[1] ?? "",
      parentId: /^ {2}parentSpanContext: \{[^}]*?spanId: '([0-9a-f]+)'/m.exec(text)?.[1],
      text,
    };
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

describe("docs/tracing.md's set-up, in an ES-module app (issue 37: it printed no span)", () => {
  it("runs the doc's tracing.mjs and app.mjs with the doc's command: the SDK call's span and its azure.storage.* events are printed", async () => {
    // The doc's files, named by their first line (`// tracing.mjs: ...`), and its `node ...` command.
    const files = (await codeBlocks("docs/tracing.md", "js")).flatMap((block) => {
      const name = /^\/\/ ([\w.-]+\.mjs)\b/.exec(block.code)?.[1];
      return name === undefined ? [] : [{ name, code: block.code }];
    });
    expect(files.map((file) => file.name)).toEqual(["tracing.mjs", "app.mjs"]);
    const command = (await codeBlocks("docs/tracing.md", "sh")).map((block) => block.code.trim()).find((code) => code.startsWith("node "));
    expect(command).toBeDefined();
    const app = `${WORK}tracing-app/`;
    await mkdir(app, { recursive: true });
    for (const file of files) await writeFile(`${app}${file.name}`, file.code);

    const run = await runNode(command!.split(/\s+/).slice(1), app, { AZURITE_TABLE_URL: env.azurite.tableUrl });
    expect(run.code, run.output).toBe(0);

    const spans = printedSpans(run.stdout);
    const calls = spans.filter((span) => span.name === "TableClient.upsertEntity");
    expect(calls, run.output).toHaveLength(1);
    const call = calls[0]!;
    const attempts = spans.filter((span) => span.parentId === call.id);
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    expect(attempts.every((span) => span.name === "HTTP PATCH")).toBe(true);
    expect(call.text).toContain(`'azure.storage.attempts': ${attempts.length},`);
    expect(call.text).toContain("'azure.storage.stop_reason': 'success'");
    // The events: one per attempt, the last a success after throttled ones, and the waits between.
    const events = [...call.text.matchAll(/^ {6}name: '([^']+)'/gm)].map((match) => match[1]);
    expect(events.every((name) => name?.startsWith("azure.storage."))).toBe(true);
    expect(events.filter((name) => name === "azure.storage.attempt")).toHaveLength(attempts.length);
    expect(events.filter((name) => name === "azure.storage.wait").length).toBeGreaterThanOrEqual(1);
    const classes = [...call.text.matchAll(/'azure\.storage\.attempt\.class': '(\w+)'/g)].map((match) => match[1]);
    expect(classes).toEqual([...attempts.slice(1).map(() => "throttled"), "success"]);
  }, 60_000);
});
