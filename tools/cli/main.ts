#!/usr/bin/env node
// The azure-storage-resilience command: `demo` and `stress` (see ./helpText.ts).
import { runCli } from "./runCli.js";

process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
