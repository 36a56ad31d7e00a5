import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MIN_NODE_MAJOR, unsupportedNodeMessage } from "../../../tools/cli/nodeVersion.js";

// .ci/run runs the suites on Node 24 (npm test) and again on Node 22; both must be supported.
describe("supported Node versions", () => {
  it('package.json says engines.node ">=22" and this run is on 22 or later', () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { engines?: { node?: string } };
    expect(pkg.engines?.node).toBe(">=22");
    expect(pkg.engines?.node).toBe(`>=${MIN_NODE_MAJOR}`);
    console.info(`running on Node ${process.versions.node}`);
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
  });

  it("the command refuses Node.js before 22 in one line, and runs on 22 and later", () => {
    expect(unsupportedNodeMessage("20.20.2")).toBe("azure-storage-resilience needs Node.js 22 or later; this is Node.js 20.20.2.");
    expect(unsupportedNodeMessage("21.7.3")).toMatch(/needs Node\.js 22 or later; this is Node\.js 21\.7\.3\.$/);
    expect(unsupportedNodeMessage("18.0.0")).toBeDefined();
    expect(unsupportedNodeMessage("22.0.0")).toBeUndefined();
    expect(unsupportedNodeMessage("24.21.0")).toBeUndefined();
    expect(unsupportedNodeMessage("not a version")).toBeDefined();
  });

  it("the command's entry point checks the version before it loads anything else", () => {
    const main = readFileSync(new URL("../../../tools/cli/main.ts", import.meta.url), "utf8");
    // Its only static import is the check: the rest is imported after it, dynamically.
    expect([...main.matchAll(/^import .* from "(.+)";$/gm)].map((m) => m[1])).toEqual(["./nodeVersion.js"]);
    expect(main.indexOf("unsupportedNodeMessage(process.versions.node)")).toBeLessThan(main.indexOf('await import("./runCli.js")'));
  });
});
