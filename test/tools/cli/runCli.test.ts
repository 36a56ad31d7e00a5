import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { runCli, type CliIo } from "../../../tools/cli/runCli.js";

// The command line in-process, with a resolver standing in for which optional peers are
// installed; the full runs are in cliDemo.test.ts and stressCli.test.ts.

function capture(installed: readonly string[]): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const resolvePackage = (name: string) => {
    if (!installed.includes(name)) throw Object.assign(new Error(`Cannot find package '${name}'`), { code: "ERR_MODULE_NOT_FOUND" });
    return name;
  };
  return { io: { stdout, stderr, env: {}, resolvePackage }, out: () => out, err: () => err };
}

describe("runCli without the optional peers", () => {
  it.each([[["--help"]], [["demo", "--help"]], [["stress", "--help"]]])("%j prints help and exits 0", async (argv) => {
    const { io, out, err } = capture([]);
    expect(await runCli(argv, io)).toBe(0);
    expect(out()).toContain("Usage: azure-storage-resilience");
    expect(err()).toBe("");
  });

  it("demo --help says how to get parsable JSON through npm", async () => {
    const { io, out } = capture([]);
    expect(await runCli(["demo", "--help"], io)).toBe(0);
    expect(out()).toContain("npm start --silent -- --json");
    expect(out()).toContain("--json-file <path>");
  });

  it("demo says in one line what to install, and exits 1 before starting anything", async () => {
    const { io, out, err } = capture(["azurite"]);
    expect(await runCli(["demo", "--duration", "5"], io)).toBe(1);
    expect(out()).toBe("");
    expect(err().trimEnd().split("\n")).toEqual([
      "azure-storage-resilience: demo needs @azure/data-tables, not installed here: npm install --save-dev @azure/data-tables (or: npx -p azure-storage-resilience -p @azure/data-tables azure-storage-resilience demo)",
    ]);
  });

  it("demo names every missing package", async () => {
    const { io, err } = capture([]);
    expect(await runCli(["demo"], io)).toBe(1);
    expect(err()).toContain("demo needs @azure/data-tables and azurite, not installed here: npm install --save-dev @azure/data-tables azurite");
  });

  it("stress against a real account does not need azurite; against the embedded one it does", async () => {
    const real = capture(["azurite"]);
    expect(await runCli(["stress", "--connection-string", "AccountName=a;AccountKey=k"], real.io)).toBe(1);
    expect(real.err()).toContain("stress needs @azure/data-tables,");
    const embedded = capture(["@azure/data-tables"]);
    expect(await runCli(["stress"], embedded.io)).toBe(1);
    expect(embedded.err()).toContain("stress needs azurite,");
  });
});
