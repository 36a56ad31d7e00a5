import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

// .ci/run runs the suites on Node 24 (npm test) and again on Node 22; both must be supported.
describe("supported Node versions", () => {
  it('package.json says engines.node ">=22" and this run is on 22 or later', () => {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as { engines?: { node?: string } };
    expect(pkg.engines?.node).toBe(">=22");
    console.info(`running on Node ${process.versions.node}`);
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22);
  });
});
