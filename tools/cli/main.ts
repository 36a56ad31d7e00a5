#!/usr/bin/env node
// The azure-storage-resilience command: `demo` and `stress` (see ./helpText.ts).
import { unsupportedNodeMessage } from "./nodeVersion.js";

// Checked before the rest loads: an old Node gets one line and exit 1, not warnings and a stack.
const refusal = unsupportedNodeMessage(process.versions.node);
if (refusal !== undefined) {
  process.stderr.write(`${refusal}\n`);
  process.exit(1);
}
const { runCli } = await import("./runCli.js");
process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
