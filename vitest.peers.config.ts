import { existsSync } from "node:fs";
import { join } from "node:path";
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// The peer matrix (scripts/peer-matrix.sh): the same tests, with the four peers the package
// is installed beside resolved from another install (PEER_MATRIX_MODULES, a node_modules
// directory holding one release of each) instead of the repo's devDependencies. Each peer
// then loads its own dependencies from there, as in a user's app.
const PEERS = ["@azure/data-tables", "@azure/storage-blob", "@azure/storage-queue", "@azure/core-rest-pipeline"];
const modules = process.env.PEER_MATRIX_MODULES;
if (modules === undefined || modules === "") throw new Error("PEER_MATRIX_MODULES is not set: run scripts/peer-matrix.sh");
for (const name of PEERS) {
  if (!existsSync(join(modules, name, "package.json"))) throw new Error(`${name} is not installed in ${modules}`);
}

export default mergeConfig(
  base,
  defineConfig({
    resolve: {
      alias: PEERS.map((name) => ({ find: new RegExp(`^${name.replace("/", "\\/")}$`), replacement: join(modules, name) })),
    },
  }),
);
