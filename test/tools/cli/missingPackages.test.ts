import { describe, expect, it } from "vitest";
import { describeMissingPackages, missingPackages } from "../../../tools/cli/missingPackages.js";

describe("missingPackages", () => {
  it("lists the names the resolver cannot find, in the order asked", () => {
    const installed = new Set(["prom-client"]);
    const resolve = (name: string) => {
      if (!installed.has(name)) throw Object.assign(new Error(`Cannot find package '${name}'`), { code: "ERR_MODULE_NOT_FOUND" });
      return `file:///node_modules/${name}/index.js`;
    };
    expect(missingPackages(["@azure/data-tables", "prom-client", "azurite"], resolve)).toEqual(["@azure/data-tables", "azurite"]);
    expect(missingPackages(["prom-client"], resolve)).toEqual([]);
  });
});

describe("describeMissingPackages", () => {
  it("is one line naming each package, for a project and for a one-off npx run", () => {
    const line = describeMissingPackages("demo", "azure-storage-resilience", ["@azure/data-tables", "azurite"]);
    expect(line).not.toContain("\n");
    expect(line).toContain("npm install --save-dev @azure/data-tables azurite");
    expect(line).toContain("npx -p azure-storage-resilience -p @azure/data-tables -p azurite azure-storage-resilience demo");
  });
});
