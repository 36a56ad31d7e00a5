import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: {
    // The tools (and their tests) import the package by name, as users do; in this repo the
    // name means the sources, as in tsconfig.json `paths` and scripts/sourceHooks.ts.
    alias: [
      { find: /^azure-storage-resilience$/, replacement: fileURLToPath(new URL("src/index.ts", import.meta.url)) },
      { find: /^azure-storage-resilience\/testing$/, replacement: fileURLToPath(new URL("src/testing/index.ts", import.meta.url)) },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start their own Azurite; two cores, so keep parallelism modest.
    maxWorkers: 2,
    restoreMocks: true,
  },
});
