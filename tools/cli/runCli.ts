import { writeFile } from "node:fs/promises";
// runDemo and runStress are imported when their command runs, not here: they load
// @azure/data-tables, an optional peer, and `--help` must work without it.
import { formatDemoSummary } from "../demo/formatDemoSummary.js";
import { formatStressSummary } from "../stress/formatStressSummary.js";
import { parseDemoArgs } from "./demoArgs.js";
import { demoHelp, mainHelp, PROGRAM, stressHelp } from "./helpText.js";
import { DEMO_PACKAGES, describeMissingPackages, missingPackages, STRESS_PACKAGES } from "./missingPackages.js";
import { redactSecrets } from "./redactSecrets.js";
import { parseStressArgs } from "./stressArgs.js";
import { isUsageError, USAGE_EXIT_CODE, UsageError } from "./usageError.js";

/** The streams and environment the CLI uses; injected so tests can capture them. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: Readonly<Record<string, string | undefined>>;
  /** Throws when a package cannot be found; defaults to `import.meta.resolve`. For tests. */
  resolvePackage?: (name: string) => unknown;
}

/** Exit code after Ctrl-C (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

/**
 * Runs the CLI and resolves with its exit code: 0 done, 1 failed, 2 bad command line,
 * 130 interrupted. Never throws; error messages are printed without stack traces or secrets.
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const secrets = io.env.AZURE_STORAGE_CONNECTION_STRING === undefined ? [] : [io.env.AZURE_STORAGE_CONNECTION_STRING];
  const interrupt = new AbortController();
  const stopSignals = onInterrupt(io, interrupt);
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case "demo":
        return await demo(rest, io, interrupt.signal);
      case "stress":
        return await stress(rest, io, interrupt.signal);
      case "help":
      case "--help":
      case "-h":
        io.stdout.write(mainHelp());
        return 0;
      case undefined:
        throw new UsageError(`a command is required: demo or stress.`);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}: use demo or stress.`);
    }
  } catch (error) {
    if (isUsageError(error)) {
      io.stderr.write(`${PROGRAM}: ${redactSecrets(error.message, secrets)}\nRun "${PROGRAM} ${argv[0] === "stress" || argv[0] === "demo" ? `${argv[0]} ` : ""}--help" for usage.\n`);
      return USAGE_EXIT_CODE;
    }
    io.stderr.write(`${PROGRAM}: ${redactSecrets(errorMessage(error), secrets)}\n`);
    return 1;
  } finally {
    stopSignals();
  }
}

async function demo(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const command = parseDemoArgs(argv);
  if (command.kind === "help") {
    io.stdout.write(demoHelp());
    return 0;
  }
  requirePackages("demo", DEMO_PACKAGES, io);
  const { runDemo } = await import("../demo/runDemo.js");
  // With --json, stdout carries only the summary.
  const chatter = command.json ? io.stderr : io.stdout;
  const summary = await runDemo(command.options, { log: (line) => chatter.write(`${line}\n`), progress: chatter, signal });
  const json = `${JSON.stringify(summary, null, 2)}\n`;
  io.stdout.write(command.json ? json : `\n${formatDemoSummary(summary)}\n`);
  if (command.jsonFile !== undefined) {
    // A file, for runs through npm: `npm start` prints its own banner on stdout.
    await writeFile(command.jsonFile, json);
    chatter.write(`Summary written to ${command.jsonFile}\n`);
  }
  return summary.interrupted ? INTERRUPTED_EXIT_CODE : 0;
}

async function stress(argv: readonly string[], io: CliIo, signal: AbortSignal): Promise<number> {
  const command = parseStressArgs(argv, io.env);
  if (command.kind === "help") {
    io.stdout.write(stressHelp());
    return 0;
  }
  requirePackages("stress", command.options.connectionString === undefined ? [...STRESS_PACKAGES, "azurite"] : STRESS_PACKAGES, io);
  const { runStress } = await import("../stress/runStress.js");
  const chatter = command.json ? io.stderr : io.stdout;
  const secrets = command.options.connectionString === undefined ? [] : [command.options.connectionString];
  const log = (line: string) => chatter.write(`${redactSecrets(line, secrets)}\n`);
  const result = await runStress(command.options, { log, signal });
  io.stdout.write(command.json ? `${JSON.stringify(result, null, 2)}\n` : `\n${formatStressSummary(result)}\n`);
  return result.interrupted ? INTERRUPTED_EXIT_CODE : 0;
}

/** First Ctrl-C (or SIGTERM): stop cleanly. Second: leave at once (Azurite's exit hook kills its children). */
function onInterrupt(io: CliIo, controller: AbortController): () => void {
  const handler = () => {
    if (controller.signal.aborted) process.exit(INTERRUPTED_EXIT_CODE);
    io.stderr.write("\nStopping: cutting off in-flight operations and stopping Azurite (Ctrl-C again to quit at once)...\n");
    controller.abort();
  };
  process.on("SIGINT", handler);
  process.on("SIGTERM", handler);
  return () => {
    process.off("SIGINT", handler);
    process.off("SIGTERM", handler);
  };
}

/** Checked before a command starts anything, so a missing peer is one line, not a stack. */
function requirePackages(command: string, packages: readonly string[], io: CliIo): void {
  const missing = missingPackages(packages, io.resolvePackage);
  if (missing.length > 0) throw new Error(describeMissingPackages(command, PROGRAM, missing));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
