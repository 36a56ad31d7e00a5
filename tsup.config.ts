import { existsSync } from "node:fs";
import { defineConfig } from "tsup";

// The CLI entry is built once it exists: tsup skips the whole ESM build (the library
// included) over one missing entry. test/packaging checks that `bin` points at a built file.
const cliEntry: Record<string, string> = existsSync("src/cli/main.ts") ? { "cli/main": "src/cli/main.ts" } : {};

// One bundle per format keeps the ESM and CommonJS builds identical in behaviour;
// tsup writes the .d.ts and .d.cts files the exports map points at.
export default defineConfig([
  {
    entry: { index: "src/index.ts", ...cliEntry },
    format: ["esm"],
    outDir: "dist/esm",
    dts: { entry: { index: "src/index.ts" } },
    sourcemap: true,
    clean: true,
    target: "node22",
  },
  {
    entry: { index: "src/index.ts" },
    format: ["cjs"],
    outDir: "dist/cjs",
    dts: true,
    sourcemap: true,
    clean: true,
    target: "node22",
    outExtension: () => ({ js: ".cjs", dts: ".d.cts" }),
  },
]);
