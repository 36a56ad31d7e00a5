import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DEFAULT_PARTITION_BREAKER_OPTIONS } from "../../src/breaker/partitionBreakerOptions.js";

const FIXTURES = new URL("../fixtures/breakerMemory/", import.meta.url);
const HOOKS = fileURLToPath(new URL("../../scripts/sourceHooks.ts", import.meta.url));
const CHILD = fileURLToPath(new URL("millionScopes.ts", FIXTURES));
const SCOPES = 1_000_000;
const MAX_SCOPES = DEFAULT_PARTITION_BREAKER_OPTIONS.maxScopes;
/**
 * After its last line the child has nothing left to do; it is killed (exit code null, a failure)
 * if it has not exited three times this long after, which means a handle keeps it alive.
 */
const EXIT_GRACE_IN_MS = 3_000;

interface Figures {
  scopes: number;
  maxScopes: number;
  maxLive: number;
  sizeAfterDispose: number;
  openBeforeDispose: number;
  liveTimersBeforeDispose: number;
  liveTimersAfterDispose: number;
  heapBeforeMb: number;
  heapAtBoundMb: number;
  heapAfterDisposeMb: number;
  elapsedInMs: number;
}

/** Runs the child; resolves with its figures and how long it took to exit after printing them. */
function runChild(): Promise<{ figures: Figures; exitCode: number | null; exitAfterInMs: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    // process.execPath is the Node 24 running vitest: it strips TypeScript types itself.
    const child = spawn(process.execPath, ["--expose-gc", "--import", HOOKS, CHILD, String(SCOPES), String(MAX_SCOPES)], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let printedAt: number | undefined;
    let killer: ReturnType<typeof setTimeout> | undefined;
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (printedAt === undefined && stdout.includes("\n")) {
        printedAt = performance.now();
        killer = setTimeout(() => child.kill("SIGKILL"), EXIT_GRACE_IN_MS * 3);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("exit", (exitCode) => {
      clearTimeout(killer);
      if (printedAt === undefined) return reject(new Error(`child printed nothing (exit ${exitCode}): ${stderr.slice(-2000)}`));
      const exitAfterInMs = performance.now() - printedAt;
      resolve({ figures: JSON.parse(stdout.trim().split("\n")[0]!) as Figures, exitCode, exitAfterInMs, stderr });
    });
  });
}

describe("partition breaker memory and timers (child process)", () => {
  it(
    `${SCOPES.toLocaleString("en")} distinct scopes stay within maxScopes, and the process exits by itself after dispose()`,
    async () => {
      const { figures, exitCode, exitAfterInMs, stderr } = await runChild();
      console.log(
        `breakerMemory: ${figures.scopes} scopes in ${figures.elapsedInMs} ms, at most ${figures.maxLive} live (max ${figures.maxScopes}); ` +
          `heap used ${figures.heapBeforeMb} MB before, ${figures.heapAtBoundMb} MB at the bound ` +
          `(+${(figures.heapAtBoundMb - figures.heapBeforeMb).toFixed(1)} MB), ${figures.heapAfterDisposeMb} MB after dispose(); ` +
          `live timers ${figures.liveTimersBeforeDispose} before dispose, ${figures.liveTimersAfterDispose} after; ` +
          `child exited ${Math.round(exitAfterInMs)} ms after its last line.`,
      );
      expect(exitCode, stderr).toBe(0);
      expect(figures.scopes).toBe(SCOPES);
      expect(figures.maxLive).toBeLessThanOrEqual(MAX_SCOPES);
      expect(figures.sizeAfterDispose).toBe(0);
      expect(figures.openBeforeDispose).toBe(5);
      // The idle sweep alone: circuits, open ones included, and pacers hold no timer.
      expect(figures.liveTimersBeforeDispose).toBe(1);
      expect(figures.liveTimersAfterDispose).toBe(0);
      expect(figures.heapAfterDisposeMb - figures.heapBeforeMb).toBeLessThan(5);
      // Exited by itself (exit code 0 above: the killer's SIGKILL comes at three times the grace);
      // how soon is a timing figure, printed above. The timer counts say why it could exit.
    },
    // CPU-bound: it took 73 s on two cores at a load average of 14 (other work and two busy loops).
    300_000,
  );
});
