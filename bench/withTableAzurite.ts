// For a benchmark's scratch entry point: Azurite's Table service, started and stopped around one run.
import { startAzurite } from "azure-storage-resilience/testing";

/** Starts Azurite (tables only), runs `run` against its table endpoint, and stops it however the run ends. */
export async function withTableAzurite<T>(run: (tableUrl: string) => Promise<T>): Promise<T> {
  const azurite = await startAzurite({ services: ["table"] });
  try {
    return await run(azurite.tableUrl);
  } finally {
    await azurite.stop();
  }
}
