import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));

/** How a CLI run ended. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCliProcess}. */
export interface CliRunOptions {
  env?: Record<string, string | undefined>;
  /** Killed (SIGKILL) after this long; the test then fails on the exit code. Defaults to 60000. */
  timeoutInMs?: number;
  /** Called once the process has started, e.g. to send it a signal later. */
  onStart?: (child: ChildProcess, output: { stdout: string; stderr: string }) => void;
}

/**
 * Runs the CLI from its TypeScript sources exactly as `npm run cli` does (Node's type
 * handling and the sources' resolve hook), as a separate process.
 */
export function runCliProcess(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  const env = { ...process.env, ...options.env };
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete env[name];
  const child = spawn(
    process.execPath,
    ["--experimental-transform-types", "--disable-warning=ExperimentalWarning", "--import", "./scripts/sourceHooks.ts", "tools/cli/main.ts", ...args],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  const output = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  options.onStart?.(child, output);
  const killer = setTimeout(() => child.kill("SIGKILL"), options.timeoutInMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, ...output });
    });
  });
}

/** Resolves once `predicate` holds on the output, polling every 50 ms. */
export async function waitForOutput(output: { stdout: string; stderr: string }, predicate: (o: { stdout: string; stderr: string }) => boolean, timeoutInMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutInMs;
  while (!predicate(output)) {
    if (Date.now() > deadline) throw new Error(`output never matched; stderr so far: ${output.stderr.slice(-500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
