import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests each start their own Azurite; two cores, so keep parallelism modest.
    maxWorkers: 2,
    restoreMocks: true,
  },
});
