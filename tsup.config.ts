import { defineConfig } from "tsup";

// The package's two entry points; the CLI (tools/cli) is built beside them for `bin`.
const LIBRARY_ENTRIES = { index: "src/index.ts", "testing/index": "src/testing/index.ts" };

// One bundle per format keeps the ESM and CommonJS builds identical in behaviour;
// tsup writes the .d.ts and .d.cts files the exports map points at. Declarations marked
// `@internal` (members the package's own modules share) are left out of them.
const DTS_COMPILER_OPTIONS = { stripInternal: true };
export default defineConfig([
  {
    entry: { ...LIBRARY_ENTRIES, "cli/main": "tools/cli/main.ts" },
    format: ["esm"],
    outDir: "dist/esm",
    dts: { entry: LIBRARY_ENTRIES, compilerOptions: DTS_COMPILER_OPTIONS },
    // The CLI imports the package by name, as users do: at run time that resolves to this
    // build's own entry points (package self-reference), not to a second bundled copy.
    external: ["azure-storage-resilience", "azure-storage-resilience/testing"],
    sourcemap: true,
    clean: true,
    target: "node22",
  },
  {
    entry: LIBRARY_ENTRIES,
    format: ["cjs"],
    outDir: "dist/cjs",
    dts: { compilerOptions: DTS_COMPILER_OPTIONS },
    // The Azurite launcher finds the azurite package from import.meta.url; tsup shims it in CommonJS.
    shims: true,
    sourcemap: true,
    clean: true,
    target: "node22",
    outExtension: () => ({ js: ".cjs", dts: ".d.cts" }),
  },
]);
