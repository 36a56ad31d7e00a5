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
  /**
   * Starts the CLI as the leader of its own process group, as a shell does for a command in a
   * terminal, so that a test can signal the whole group (`process.kill(-child.pid, ...)`) the way
   * a terminal's Ctrl-C does. Defaults to false.
   */
  processGroup?: boolean;
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
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: options.processGroup ?? false },
  );
  const output = { stdout: "", stderr: "" };
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output.stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output.stderr += chunk));
  options.onStart?.(child, output);
  const killer = setTimeout(() => killAll(child, options.processGroup ?? false), options.timeoutInMs ?? 60_000);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, ...output });
    });
  });
}

/** SIGKILL to the child, or to its whole group when it leads one (nothing of the run may survive a timeout). */
function killAll(child: ChildProcess, processGroup: boolean): void {
  if (processGroup && child.pid !== undefined) {
    try {
      process.kill(-child.pid, "SIGKILL");
      return;
    } catch {
      // The group is gone already, or this platform has none: fall back to the child alone.
    }
  }
  child.kill("SIGKILL");
}

/** Resolves once `predicate` holds on the output, polling every 50 ms. */
export async function waitForOutput(output: { stdout: string; stderr: string }, predicate: (o: { stdout: string; stderr: string }) => boolean, timeoutInMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutInMs;
  while (!predicate(output)) {
    if (Date.now() > deadline) throw new Error(`output never matched; stderr so far: ${output.stderr.slice(-500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
