import { defineConfig } from "tsup";

// One bundle per format keeps the ESM and CommonJS builds identical in behaviour;
// tsup writes the .d.ts and .d.cts files the exports map points at.
export default defineConfig([
  {
    entry: { index: "src/index.ts", "cli/main": "src/cli/main.ts" },
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
